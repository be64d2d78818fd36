package com.acme.common;

import org.springframework.cloud.openfeign.FeignClient;
import org.springframework.web.bind.annotation.PostMapping;

@FeignClient(name = "partner", url = "${partner.url}")
public interface PartnerFeign {
    @PostMapping("/charge")
    String charge(String orderId);
}
