package com.acme.common;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;

@Entity
public class Account {
    @Id
    private Long id;
    private long balance;

    public long getBalance() { return balance; }
    public void setBalance(long balance) { this.balance = balance; }
}
