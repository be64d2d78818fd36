package com.acme.tx;

import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OkHttpTx {
    private final OkHttpClient client = new OkHttpClient();

    @Transactional
    public int ping() throws Exception {
        Request request = new Request.Builder().url("http://partner/ping").build();
        try (Response response = client.newCall(request).execute()) { // expect: remote-in-tx
            return response.code();
        }
    }
}
