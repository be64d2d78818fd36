package com.acme.common;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Version;

@Entity
public class VersionedOrder {
    @Id
    private Long id;
    @Version
    private long version;
    private String status;

    public void setStatus(String status) { this.status = status; }
}
