package com.acme.common;

import org.springframework.data.jpa.repository.JpaRepository;

public interface OrderRepository extends JpaRepository<VersionedOrder, Long> {
}
