// lint_code_bench: how fast `lockbench lint --code` reads a large service.
//   lint_code_bench [FILES=10000] [THREADS=0 (every core)] [DIR]
// Generates FILES Java sources (a Spring service, its partner client, its
// repository and entity, each about 1.5 KiB; one in four a finding) into DIR
// (default: a fresh directory under the system's temp directory, removed
// after), then times the scan (read + tree-sitter parse, on THREADS threads)
// and the analysis (one thread), and prints both with files/s and the CPU
// seconds they took (on a loaded host the wall time is the other jobs' too).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <unistd.h>

#include "lint_code/findings.hpp"
#include "lint_code/scan.hpp"

namespace fs = std::filesystem;

namespace {

std::string service(int i) {
  const std::string n = std::to_string(i);
  const bool finding = i % 4 == 0;
  return "package com.example.svc" + std::to_string(i / 100) + ";\n\n"
         "import org.springframework.stereotype.Service;\n"
         "import org.springframework.transaction.annotation.Transactional;\n"
         "import org.springframework.web.client.RestTemplate;\n\n"
         "@Service\n" + std::string(finding ? "@Transactional\n" : "") +
         "public class OrderService" + n + " {\n"
         "    private final OrderRepository" + n + " orders;\n"
         "    private final PartnerClient" + n + " partner;\n"
         "    private final java.util.Map<String, String> cache = new java.util.HashMap<>();\n\n"
         "    public OrderService" + n + "(OrderRepository" + n + " orders, PartnerClient" + n + " partner) {\n"
         "        this.orders = orders;\n        this.partner = partner;\n    }\n\n"
         "    public void place(Long id, String person) {\n"
         "        Order" + n + " o = orders.findById(id).orElseThrow();\n"
         "        if (o.getStatus() == null) { o.setStatus(\"NEW\"); }\n"
         "        partner.register(person);\n"
         "        for (int k = 0; k < 3; k++) { cache.put(person + k, String.valueOf(k * " + n + ")); }\n"
         "    }\n\n"
         "    public String cached(String key) {\n"
         "        synchronized (cache) { return cache.get(key); }\n"
         "    }\n}\n";
}

std::string client(int i) {
  const std::string n = std::to_string(i);
  return "package com.example.svc" + std::to_string(i / 100) + ";\n\n"
         "import org.springframework.stereotype.Component;\n"
         "import org.springframework.web.client.RestTemplate;\n\n"
         "@Component\npublic class PartnerClient" + n + " {\n"
         "    private final RestTemplate restTemplate;\n\n"
         "    PartnerClient" + n + "(RestTemplate restTemplate) { this.restTemplate = restTemplate; }\n\n"
         "    public String register(String person) {\n"
         "        String body = \"{\\\"person\\\": \\\"\" + person + \"\\\"}\";\n"
         "        return restTemplate.postForObject(\"http://partner/register/" + n + "\", body, String.class);\n"
         "    }\n}\n";
}

std::string repository(int i) {
  const std::string n = std::to_string(i);
  return "package com.example.svc" + std::to_string(i / 100) + ";\n\n"
         "import org.springframework.data.jpa.repository.JpaRepository;\n\n"
         "public interface OrderRepository" + n + " extends JpaRepository<Order" + n + ", Long> {\n"
         "    java.util.List<Order" + n + "> findByStatus(String status);\n}\n";
}

std::string entity(int i) {
  const std::string n = std::to_string(i);
  return "package com.example.svc" + std::to_string(i / 100) + ";\n\n"
         "import jakarta.persistence.*;\n\n"
         "@Entity\n@Table(name = \"orders_" + n + "\")\npublic class Order" + n + " {\n"
         "    @Id @GeneratedValue private Long id;\n    @Version private long version;\n"
         "    private String status;\n    private java.time.Instant createdAt;\n\n"
         "    public String getStatus() { return status; }\n"
         "    public void setStatus(String status) { this.status = status; }\n}\n";
}

// CPU seconds of this process so far (every thread): the figure a busy host does not inflate.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int files = argc > 1 ? std::stoi(argv[1]) : 10000;
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::stoi(argv[2])) : 0;
  const bool own_dir = argc <= 3;
  const fs::path dir = own_dir ? fs::temp_directory_path() / ("lint_code_bench_" + std::to_string(::getpid())) : fs::path(argv[3]);
  fs::create_directories(dir);
  for (int i = 0; i < files; ++i) {
    const int group = i / 4;
    const fs::path pkg = dir / ("svc" + std::to_string(group / 100));
    if (i % 400 == 0) fs::create_directories(pkg);
    const char* names[] = {"OrderService", "PartnerClient", "OrderRepository", "Order"};
    std::ofstream(pkg / (names[i % 4] + std::to_string(group) + ".java"))
        << (i % 4 == 0 ? service(group) : i % 4 == 1 ? client(group) : i % 4 == 2 ? repository(group) : entity(group));
  }
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  const auto scan = lockbench::lint_code::scan_tree(dir.string(), threads);
  const double scan_s = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  const auto findings = lockbench::lint_code::analyze(scan.files, {});
  const double analyze_s = seconds_since(t1);
  const double total = scan_s + analyze_s;
  const double cpu = cpu_seconds() - cpu0;
  std::printf("lint_code_bench: %d Java files (%.1f MiB) on %u threads: %.2f s (scan and parse %.2f s, analysis %.2f s), "
              "%.0f files/s; CPU %.2f s; %zu findings\n",
              scan.counts.java_files, static_cast<double>(scan.counts.bytes) / (1 << 20),
              threads ? threads : std::thread::hardware_concurrency(), total, scan_s, analyze_s,
              scan.counts.java_files / total, cpu, findings.size());
  if (own_dir) fs::remove_all(dir);
  return scan.counts.java_files == files ? 0 : 1;
}
