package com.acme.tx;

import jakarta.transaction.Transactional;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.springframework.stereotype.Service;

@Service
public class JavaHttpClientTx {
    private final HttpClient http = HttpClient.newHttpClient();

    @Transactional
    public String notifyPartner(String body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://partner/notify"))
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return http.send(req, HttpResponse.BodyHandlers.ofString()).body(); // expect: remote-in-tx
    }
}
