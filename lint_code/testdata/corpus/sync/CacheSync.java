package com.acme.sync;

import java.util.HashMap;
import java.util.Map;
import org.springframework.stereotype.Service;

@Service
public class CacheSync {
    private final Map<String, String> cache = new HashMap<>();

    public String get(String key) {
        synchronized (cache) {
            return cache.computeIfAbsent(key, k -> k.toUpperCase());
        }
    }

    public synchronized void clear() {
        cache.clear();
    }
}
