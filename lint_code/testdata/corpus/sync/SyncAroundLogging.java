package com.acme.sync;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Service;

// Near miss: synchronized around memory and a log line, no database, no partner.
@Service
public class SyncAroundLogging {
    private static final Logger log = LoggerFactory.getLogger(SyncAroundLogging.class);
    private int seen;

    public void seen(String id) {
        synchronized (this) {
            seen++;
            log.info("seen {} ({})", id, seen);
        }
    }
}
