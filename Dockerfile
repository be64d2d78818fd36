# lockbench and the fake partner on Debian 12, built the way scripts/setup builds them.
FROM debian:12
WORKDIR /src
COPY . /src
RUN scripts/setup \
 && cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DLOCKBENCH_BUILD_TESTS=OFF -DLOCKBENCH_BUILD_BENCH=OFF \
 && cmake --build /build -j"$(nproc)" --target lockbench fake_partner \
 && install -m 0755 /build/cli/lockbench /build/fake_partner/server/fake_partner /usr/local/bin/
ENTRYPOINT []
