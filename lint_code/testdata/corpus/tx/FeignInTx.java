package com.acme.tx;

import com.acme.common.PartnerFeign;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class FeignInTx {
    @Autowired
    private PartnerFeign partner;

    @Transactional
    public String checkout(String orderId) {
        return partner.charge(orderId); // expect: remote-in-tx
    }
}
