package com.acme.sync;

import java.util.ArrayList;
import java.util.List;

public class NotABean {
    private final List<String> items = new ArrayList<>();

    public synchronized void add(String s) {
        items.add(s);
    }
}
