package com.acme.opt;

import com.acme.common.OrderRepository;
import com.acme.common.PartnerClient;
import com.acme.common.VersionedOrder;
import org.springframework.stereotype.Service;

@Service
public class VersionedOrderService {
    private final OrderRepository orders;
    private final PartnerClient partnerClient;

    VersionedOrderService(OrderRepository orders, PartnerClient partnerClient) {
        this.orders = orders;
        this.partnerClient = partnerClient;
    }

    public void ship(Long id) {
        VersionedOrder o = orders.findById(id).orElseThrow();
        partnerClient.register("ship " + id);
        o.setStatus("SHIPPED");
        orders.save(o);
    }
}
