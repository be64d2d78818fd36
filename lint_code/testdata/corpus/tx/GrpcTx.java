package com.acme.tx;

import com.acme.grpc.PaymentGrpc;
import com.acme.grpc.ChargeRequest;
import java.util.concurrent.TimeUnit;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class GrpcTx {
    private final PaymentGrpc.PaymentBlockingStub stub;

    GrpcTx(PaymentGrpc.PaymentBlockingStub stub) { this.stub = stub; }

    @Transactional
    public void charge(String id) {
        stub.withDeadlineAfter(5, TimeUnit.SECONDS).charge(ChargeRequest.newBuilder().setId(id).build()); // expect: remote-in-tx
    }
}
