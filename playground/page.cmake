# Assembles the playground's one page: index.html with its markers replaced by
# the style, the page's scripts and the worker's source (worker.js followed by
# the emscripten module with the wasm embedded), so the page needs no server
# and fetches nothing. Run by cmake -P with SOURCE_DIR, MODULE and OUT.
file(READ ${SOURCE_DIR}/index.html page)
file(READ ${SOURCE_DIR}/style.css style)
set(scripts "")
foreach(js charts.js lessons.js app.js)
  file(READ ${SOURCE_DIR}/${js} text)
  string(APPEND scripts "<script>\n${text}</script>\n")
endforeach()
file(READ ${SOURCE_DIR}/worker.js worker)
file(READ ${MODULE} module)
# The worker's source sits in a <script type="text/plain">: only "</script"
# would end it early, so that is written as "<\/script" (the same in JS).
set(worker_text "${module}\n${worker}")
string(REPLACE "</script" "<\\/script" worker_text "${worker_text}")
string(REPLACE "<!-- STYLE -->" "<style>\n${style}</style>" page "${page}")
string(REPLACE "<!-- SCRIPTS -->" "${scripts}" page "${page}")
string(REPLACE "<!-- WORKER -->" "<script type=\"text/plain\" id=\"worker-source\">\n${worker_text}</script>" page "${page}")
file(WRITE ${OUT}.tmp "${page}")
file(RENAME ${OUT}.tmp ${OUT})
