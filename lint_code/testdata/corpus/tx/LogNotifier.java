package com.acme.tx;

import org.springframework.stereotype.Component;

@Component
public class LogNotifier implements Notifier {
    @Override
    public void notifyOf(String id) {
        System.out.println(id);
    }
}
