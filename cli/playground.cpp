// lockbench playground: the built playground page (build/playground/index.html,
// the simulator compiled to WebAssembly: docs/playground.md) over HTTP on
// 127.0.0.1, for browsers that keep file:// pages apart. The page is one file
// and needs nothing else; every other path is 404. Prints "playground:
// http://127.0.0.1:PORT/" first; runs until killed (Ctrl-C).
#include "cli/playground.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <httplib.h>

#include "base/units.hpp"

namespace lockbench::cli {

int cmd_playground(int port) {
  const std::string path = LOCKBENCH_PLAYGROUND_PAGE;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw SettingError("playground: " + path +
                       " is not built (it needs em++: Debian's emscripten package; see docs/playground.md)");
  std::stringstream page;
  page << in.rdbuf();
  const std::string html = page.str();
  httplib::Server svr;
  // Sent as it is: Debian's cpp-httplib would otherwise compress the 2.6 MB
  // page with brotli for a browser's Accept-Encoding, about 14 s of CPU a load
  // on this project's 2-core machine (curl, which asks for none, took 0.03 s).
  // A provider of known length is sent as it is (a body set with set_content is not).
  const auto page_response = [&](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(html.size(), "text/html; charset=utf-8",
                             [&](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                               return sink.write(html.data() + offset, length);
                             });
  };
  svr.Get("/", page_response);
  svr.Get("/index.html", page_response);
  const char* host = "127.0.0.1";
  const int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) throw SettingError("--port: " + std::to_string(port) + " cannot be bound on 127.0.0.1 (in use?)");
  std::printf("playground: http://%s:%d/ (Ctrl-C stops)\n", host, bound);
  std::fflush(stdout);
  return svr.listen_after_bind() ? 0 : 1;
}

}  // namespace lockbench::cli
