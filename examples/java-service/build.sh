#!/usr/bin/env bash
# build.sh [OUT_DIR]: compiles the reference service with javac against
# Debian's jars (/usr/share/java: libhikaricp-java, libpostgresql-jdbc-java,
# libslf4j-java; scripts/setup installs them). No Maven, no download.
# Writes OUT_DIR/classes and OUT_DIR/run.sh (default OUT_DIR: ./out).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/out}
jars=${LOCKBENCH_JAVA_JARS:-/usr/share/java}
command -v javac >/dev/null || { echo "build.sh: no javac (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
cp=""
for j in HikariCP.jar postgresql.jar slf4j-api.jar slf4j-nop.jar; do
  [[ -f $jars/$j ]] || { echo "build.sh: $jars/$j is missing (apt-get install libhikaricp-java libpostgresql-jdbc-java libslf4j-java)" >&2; exit 1; }
  cp=${cp:+$cp:}$jars/$j
done
rm -rf "$out/classes"
mkdir -p "$out/classes"
javac --release 17 -Xlint:all -Werror -d "$out/classes" -cp "$cp" $(find "$here/src" -name '*.java' | sort)
# A fixed heap with a young generation of 768 MB: the service collects when a
# runner reads /lockbench/info (the start of a run), so a run of up to about
# 2,500 requests (HttpClient allocates about 250 kB a request) sees no
# stop-the-world pause (README, "Garbage collection").
cat >"$out/run.sh" <<RUN
#!/usr/bin/env bash
# The reference service (examples/java-service): flags as in its README.
exec java -XX:+UseSerialGC -Xms1g -Xmx1g -Xmn768m -Xss512k -XX:TieredStopAtLevel=1 -Dsun.net.httpserver.nodelay=true -cp "$out/classes:$cp" lockbench.example.Service "\$@"
RUN
chmod +x "$out/run.sh"
echo "$out/run.sh"
