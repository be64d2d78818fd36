package com.acme.tx;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class RetrofitTx {
    private final PartnerApi api;

    RetrofitTx(PartnerApi api) { this.api = api; }

    @Transactional
    public String charge(String id) throws Exception {
        return api.charge(id).execute().body(); // expect: remote-in-tx
    }
}
