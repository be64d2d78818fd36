package com.acme.common;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;

@Entity
public class OutboxEvent {
    @Id
    private Long id;
    private String payload;

    public OutboxEvent(String payload) { this.payload = payload; }
}
