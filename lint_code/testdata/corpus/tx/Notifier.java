package com.acme.tx;

public interface Notifier {
    void notifyOf(String id);
}
