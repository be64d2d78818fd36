package com.acme.tx;

import retrofit2.Call;
import retrofit2.http.Body;
import retrofit2.http.POST;

public interface PartnerApi {
    @POST("charge")
    Call<String> charge(@Body String id);
}
