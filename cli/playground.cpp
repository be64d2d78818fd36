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
  svr.Get("/", [&](const httplib::Request&, httplib::Response& res) { res.set_content(html, "text/html; charset=utf-8"); });
  svr.Get("/index.html",
          [&](const httplib::Request&, httplib::Response& res) { res.set_content(html, "text/html; charset=utf-8"); });
  const char* host = "127.0.0.1";
  const int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound < 0) throw SettingError("--port: " + std::to_string(port) + " cannot be bound on 127.0.0.1 (in use?)");
  std::printf("playground: http://%s:%d/ (Ctrl-C stops)\n", host, bound);
  std::fflush(stdout);
  return svr.listen_after_bind() ? 0 : 1;
}

}  // namespace lockbench::cli
