package com.acme.tx;

import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class ApacheHttpTx {
    private final CloseableHttpClient httpClient;

    ApacheHttpTx(CloseableHttpClient httpClient) { this.httpClient = httpClient; }

    @Transactional
    public void push(String id) throws Exception {
        HttpPost post = new HttpPost("http://partner/push/" + id);
        httpClient.execute(post, response -> response.getCode()); // expect: remote-in-tx
    }
}
