// `lockbench playground [--port P]`: the playground page over HTTP on 127.0.0.1.
#pragma once

namespace lockbench::cli {

// Serves the built page until killed; throws SettingError when it is not built
// or the port cannot be bound.
int cmd_playground(int port);

}  // namespace lockbench::cli
