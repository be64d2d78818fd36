#include "lint_code/findings.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

namespace lockbench::lint_code {

const char* level_name(Finding::Level l) {
  switch (l) {
    case Finding::Level::note: return "note";
    case Finding::Level::warn: return "warn";
    case Finding::Level::flag: return "flag";
  }
  return "flag";
}

const std::vector<std::string>& finding_kinds() {
  static const std::vector<std::string> kinds = {"remote-in-tx", "synchronized", "advisory-lock", "orm-lease",
                                                 "optimistic-no-version", "unresolved"};
  return kinds;
}

namespace {

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool any_name(const Call& c, std::initializer_list<std::string_view> names) {
  for (const auto& n : c.names)
    for (auto w : names)
      if (n == w) return true;
  return false;
}
std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}
std::string call_text(const Call& c) {
  std::string s = c.root.empty() ? "" : c.root + ".";
  for (std::size_t i = 0; i < c.names.size(); ++i) s += (i ? "()." : "") + c.names[i];
  return s + "()";
}

// A method and the type that declares it.
struct MethodRef {
  const TypeDecl* type = nullptr;
  const Method* method = nullptr;
  bool operator<(const MethodRef& o) const { return method < o.method; }
  bool operator==(const MethodRef& o) const { return method == o.method; }
};

// What a method's transaction attribute says (TransactionAttribute).
struct TxAttr {
  bool annotated = false;
  bool on_class = false;
  std::string propagation = "REQUIRED";
  bool read_only = false;
  bool starts() const {  // called through the proxy with no transaction: does one begin?
    return annotated && propagation != "NOT_SUPPORTED" && propagation != "NEVER" && propagation != "SUPPORTS";
  }
  std::string text() const {
    std::string s = "@Transactional";
    std::string args;
    if (propagation != "REQUIRED") args = propagation;
    if (read_only) args += std::string(args.empty() ? "" : ", ") + "readOnly";
    if (!args.empty()) s += "(" + args + ")";
    return s + (on_class ? " on the class" : "");
  }
};

TxAttr tx_of_annotation(const Annotation& a) {
  TxAttr t;
  t.annotated = true;
  for (const char* p : {"REQUIRES_NEW", "NOT_SUPPORTED", "NEVER", "SUPPORTS", "MANDATORY", "NESTED"})
    if (contains(a.args, p)) t.propagation = p;
  static const std::regex ro(R"(readOnly\s*=\s*true)");
  t.read_only = std::regex_search(a.args, ro);
  return t;
}

bool is_tx_event_listener_after_commit(const Method& m) {
  const Annotation* a = find_annotation(m.annotations, "TransactionalEventListener");
  if (!a) return false;
  return !contains(a->args, "BEFORE_COMMIT");  // AFTER_COMMIT is the default phase
}

bool is_spring_bean(const TypeDecl& t) {
  for (const char* a : {"Service", "Component", "Repository", "Controller", "RestController", "Configuration"})
    if (has_annotation(t.annotations, a)) return true;
  for (const auto& m : t.methods)
    if (has_annotation(m.annotations, "Transactional") || has_annotation(m.annotations, "Scheduled")) return true;
  return has_annotation(t.annotations, "Transactional");
}

// The first generic argument of a supertype: JpaRepository<Lease, Long> -> Lease.
std::string first_type_argument(const std::string& text) {
  const auto lt = text.find('<');
  if (lt == std::string::npos) return "";
  std::string s = text.substr(lt + 1);
  const auto end = s.find_first_of(",>");
  s = s.substr(0, end);
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (const auto dot = s.rfind('.'); dot != std::string::npos) s = s.substr(dot + 1);
  return s;
}

class Index {
 public:
  explicit Index(const std::vector<JavaFile>& files) {
    for (const auto& f : files)
      for (const auto& t : f.types) {
        by_name_[t.name].push_back(&t);
        imports_[&t] = &f.imports;
      }
    for (const auto& [name, ts] : by_name_)
      for (const TypeDecl* t : ts) {
        for (const auto& s : t->supertypes) implementations_[s].push_back(t);
        if (t->kind == TypeDecl::Kind::interface_) {
          if (has_annotation(t->annotations, "FeignClient")) feign_.insert(t->name);
          for (const auto& m : t->methods)
            for (const char* verb : {"GET", "POST", "PUT", "DELETE", "PATCH", "HTTP"})
              if (has_annotation(m.annotations, verb)) retrofit_.insert(t->name);
          for (std::size_t i = 0; i < t->supertypes.size(); ++i)
            if (ends_with(t->supertypes[i], "Repository")) {
              repositories_[t->name] = first_type_argument(t->supertype_texts[i]);
            }
          if (has_annotation(t->annotations, "Repository") && !repositories_.count(t->name)) repositories_[t->name] = "";
        }
        if (has_annotation(t->annotations, "Entity")) entities_[t->name] = t;
      }
  }

  // The one declaration of `name` visible from `from` (same package, or imported); null when none or ambiguous.
  const TypeDecl* type(const std::string& name, const TypeDecl& from, bool* ambiguous = nullptr) const {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) return nullptr;
    if (it->second.size() == 1) return it->second.front();
    const TypeDecl* pick = nullptr;
    int picks = 0;
    const auto imp = imports_.find(&from);
    for (const TypeDecl* t : it->second) {
      bool visible = t->package == from.package;
      if (imp != imports_.end())
        for (const auto& i : *imp->second)
          if (i == t->package + "." + t->name || i == t->package) visible = true;
      if (visible) {
        pick = t;
        ++picks;
      }
    }
    if (picks == 1) return pick;
    if (ambiguous) *ambiguous = true;
    return nullptr;
  }
  std::vector<const TypeDecl*> implementations(const std::string& iface) const {
    std::vector<const TypeDecl*> out;
    const auto it = implementations_.find(iface);
    if (it == implementations_.end()) return out;
    for (const TypeDecl* t : it->second)
      if (t->kind == TypeDecl::Kind::class_) out.push_back(t);
    return out;
  }
  bool feign(const std::string& t) const { return feign_.count(t) > 0; }
  bool retrofit(const std::string& t) const { return retrofit_.count(t) > 0; }
  bool repository(const std::string& t) const { return repositories_.count(t) > 0 || ends_with(t, "Repository"); }
  std::string repository_entity(const std::string& t) const {
    const auto it = repositories_.find(t);
    return it == repositories_.end() ? "" : it->second;
  }
  const TypeDecl* entity(const std::string& name) const {
    const auto it = entities_.find(name);
    return it == entities_.end() ? nullptr : it->second;
  }
  const std::map<std::string, const TypeDecl*>& entities() const { return entities_; }
  const std::map<std::string, std::vector<const TypeDecl*>>& all() const { return by_name_; }

 private:
  std::map<std::string, std::vector<const TypeDecl*>> by_name_;
  std::unordered_map<const TypeDecl*, const std::vector<std::string>*> imports_;
  std::map<std::string, std::vector<const TypeDecl*>> implementations_;
  std::set<std::string> feign_, retrofit_;
  std::map<std::string, std::string> repositories_;  // repository -> its entity ("" = not known)
  std::map<std::string, const TypeDecl*> entities_;
};

const Method* find_method(const TypeDecl& t, const std::string& name, int args) {
  const Method* by_name = nullptr;
  int named = 0;
  for (const auto& m : t.methods) {
    if (m.name != name) continue;
    if (m.param_count == args) return &m;
    by_name = &m;
    ++named;
  }
  return named == 1 ? by_name : nullptr;
}

// The type of a name inside a method: a local, a parameter, a field; a
// capitalised name is a type itself (a static call).
std::string type_of(const std::string& name, const Method& m, const TypeDecl& t, const Call& c) {
  if (name.empty() || name == "this") return t.name;
  // The nearest local declared at or before the call.
  const Variable* best = nullptr;
  for (const auto& v : m.locals)
    if (v.name == name && v.line <= c.line) best = &v;
  if (best) return best->type;
  for (const auto& v : m.params)
    if (v.name == name) return v.type;
  for (const auto& f : t.fields)
    if (f.name == name) return f.type;
  if (std::isupper(static_cast<unsigned char>(name[0]))) return name;
  return "";
}

// What a call is.
struct Resolved {
  enum class Kind { other, remote, db, method, unresolved, async };
  Kind kind = Kind::other;
  std::string what;  // "RestTemplate.postForEntity", "JdbcTemplate.update"
  MethodRef target;
  bool self = false;  // this.m() / m(): the proxy is bypassed
  std::vector<MethodRef> candidates;  // unresolved: the methods it could be
  std::string receiver_type;
};

class Analyzer {
 public:
  Analyzer(const std::vector<JavaFile>& files, const AnalyzeOptions& o) : files_(files), index_(files), o_(o) {}

  std::vector<Finding> run() {
    for (const auto& f : files_)
      for (const auto& t : f.types)
        for (const auto& m : t.methods) all_methods_.push_back({&t, &m});
    remote_in_tx();
    for (const auto& ref : all_methods_) {
      synchronized_lock(ref);
      advisory(ref);
      orm_lease(ref);
      optimistic(ref);
    }
    std::sort(out_.begin(), out_.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.file, a.line, a.kind, a.message) < std::tie(b.file, b.line, b.kind, b.message);
    });
    return std::move(out_);
  }

 private:
  const std::vector<JavaFile>& files_;
  Index index_;
  AnalyzeOptions o_;
  std::vector<MethodRef> all_methods_;
  std::vector<Finding> out_;
  std::set<const Method*> in_tx_;  // methods reached inside a transaction
  std::set<std::pair<std::string, int>> unresolved_seen_;
  // Methods one walk may enter (every entry resets it): depth bounds a path,
  // this bounds the paths, so a wide call graph costs at most this much.
  static constexpr int kWalkBudget = 20000;
  int budget_ = kWalkBudget;

  static TxAttr tx_attr(const TypeDecl& t, const Method& m) {
    if (const Annotation* a = find_annotation(m.annotations, "Transactional")) return tx_of_annotation(*a);
    if (m.is_private || m.is_static || m.is_constructor) return {};
    if (const Annotation* a = find_annotation(t.annotations, "Transactional")) {
      TxAttr x = tx_of_annotation(*a);
      x.on_class = true;
      return x;
    }
    return {};
  }

  static bool async_parent(const Method& m, const Call& c, const TypeDecl& t) {
    for (int p = c.parent; p >= 0; p = m.calls[static_cast<std::size_t>(p)].parent) {
      const Call& pc = m.calls[static_cast<std::size_t>(p)];
      if (any_name(pc, {"runAsync", "supplyAsync", "submit", "schedule", "scheduleAtFixedRate", "scheduleWithFixedDelay",
                        "subscribe", "thenApplyAsync", "thenAcceptAsync", "thenRunAsync", "thenComposeAsync", "start",
                        "startVirtualThread", "ofVirtual"}))
        return true;
      const std::string rt = type_of(pc.root, m, t, pc);
      if (any_name(pc, {"execute"}) && (ends_with(rt, "Executor") || ends_with(rt, "ExecutorService"))) return true;
    }
    return false;
  }

  // Inside a TransactionTemplate block: the index of the execute call, or -1.
  static int tx_template_parent(const Method& m, const Call& c, const TypeDecl& t) {
    for (int p = c.parent; p >= 0; p = m.calls[static_cast<std::size_t>(p)].parent) {
      const Call& pc = m.calls[static_cast<std::size_t>(p)];
      if (is_tx_template_call(m, pc, t)) return p;
    }
    return -1;
  }
  static bool is_tx_template_call(const Method& m, const Call& c, const TypeDecl& t) {
    if (c.names.empty() || (c.names[0] != "execute" && c.names[0] != "executeWithoutResult")) return false;
    const std::string rt = type_of(c.root, m, t, c);
    return rt == "TransactionTemplate" || rt == "TransactionOperations";
  }

  std::optional<std::string> remote_kind(const std::string& type, const Call& c) const {
    if (c.names.empty() || type.empty()) return std::nullopt;
    const std::string& first = c.names[0];
    if ((type == "RestTemplate" || type == "TestRestTemplate" || type == "RestOperations") &&
        any_name(c, {"getForObject", "getForEntity", "headForHeaders", "postForLocation", "postForObject", "postForEntity",
                     "put", "patchForObject", "delete", "optionsForAllow", "exchange", "execute"}))
      return "RestTemplate." + first;  // its HTTP methods, not getInterceptors() and the like
    if (type == "RestClient" && any_name(c, {"retrieve", "exchange", "toEntity", "body"})) return "RestClient." + first + "…" + c.names.back();
    if (type == "WebClient" && any_name(c, {"block", "blockFirst", "blockLast", "blockOptional"}))
      return "WebClient." + first + "…block()";
    if (type == "HttpClient" && any_name(c, {"send"})) return std::string("java.net.http.HttpClient.send");
    if ((type == "HttpClient" || type == "CloseableHttpClient" || type == "HttpClients") && any_name(c, {"execute"}))
      return std::string("Apache HttpClient.execute");
    if (type == "OkHttpClient" && any_name(c, {"execute"})) return std::string("OkHttp newCall().execute()");
    if (ends_with(type, "BlockingStub") || ends_with(type, "BlockingV2Stub"))
      for (const auto& n : c.names)  // withDeadlineAfter(...).charge(...): the call is the first name not with*
        if (!starts_with(n, "with")) return "gRPC " + type + "." + n;
    if (index_.feign(type)) return "@FeignClient " + type + "." + first;
    if (index_.retrofit(type) && any_name(c, {"execute"})) return "Retrofit " + type + "." + first + "().execute()";
    return std::nullopt;
  }

  std::optional<std::string> db_kind(const std::string& type, const Call& c) const {
    if (c.names.empty() || type.empty()) return std::nullopt;
    for (const char* t : {"JdbcTemplate", "NamedParameterJdbcTemplate", "JdbcClient", "JdbcOperations", "EntityManager",
                          "Session", "DataSource", "Connection", "PreparedStatement", "Statement"})
      if (type == t) return type + "." + c.names[0];
    if (index_.repository(type)) return type + "." + c.names[0];
    return std::nullopt;
  }

  Resolved resolve(const TypeDecl& t, const Method& m, const Call& c) const {
    Resolved r;
    if (c.names.empty() || c.root == "super") return r;
    const std::string type = type_of(c.root, m, t, c);
    r.receiver_type = type;
    if (auto k = remote_kind(type, c)) {
      r.kind = Resolved::Kind::remote;
      r.what = *k;
      return r;
    }
    if (auto k = db_kind(type, c)) {
      r.kind = Resolved::Kind::db;
      r.what = *k;
      return r;
    }
    if (type.empty()) return r;
    const bool self = c.root.empty() || c.root == "this";
    if (self && c.names.size() > 1) return r;  // a call on what a method of this class returns
    bool ambiguous = false;
    const TypeDecl* decl = self ? &t : index_.type(type, t, &ambiguous);
    if (!decl) {
      if (ambiguous) {
        r.kind = Resolved::Kind::unresolved;
        r.what = type + " is declared more than once in the tree";
        for (const TypeDecl* d : index_.all().at(type))
          if (const Method* cm = find_method(*d, c.names[0], c.arg_count)) r.candidates.push_back({d, cm});
      }
      return r;
    }
    const TypeDecl* owner = decl;
    const Method* target = find_method(*decl, c.names[0], c.arg_count);
    if (!target && decl->kind == TypeDecl::Kind::class_) {  // inherited from a superclass in the tree
      for (const auto& s : decl->supertypes)
        if (const TypeDecl* sup = index_.type(s, *decl); sup && sup->kind == TypeDecl::Kind::class_)
          if ((target = find_method(*sup, c.names[0], c.arg_count))) {
            owner = sup;
            break;
          }
    }
    if (decl->kind == TypeDecl::Kind::interface_ && !self) {
      const auto impls = index_.implementations(decl->name);
      std::vector<MethodRef> found;
      for (const TypeDecl* impl : impls)
        if (const Method* im = find_method(*impl, c.names[0], c.arg_count); im && im->has_body) found.push_back({impl, im});
      if (found.size() == 1) {
        r.kind = Resolved::Kind::method;
        r.target = found.front();
        r.what = found.front().type->name + "." + c.names[0];
        return r;
      }
      if (found.size() > 1) {
        r.kind = Resolved::Kind::unresolved;
        r.what = decl->name + "." + c.names[0] + " has " + std::to_string(found.size()) + " implementations in the tree";
        r.candidates = found;
      }
      return r;
    }
    if (!target || !target->has_body) return r;
    r.kind = Resolved::Kind::method;
    r.target = {owner, target};
    r.self = self;
    r.what = owner->name + "." + target->name;
    if (!self && has_annotation(target->annotations, "Async")) r.kind = Resolved::Kind::async;
    return r;
  }

  static PathStep step(const TypeDecl& t, int line, std::string text) { return {t.file, line, std::move(text)}; }

  struct Reached {
    std::vector<PathStep> path;  // entry ... call
    std::string what;
    std::string file;
    int line = 0;
  };

  // Remote (and, with `db`, database) calls reachable from `calls` of `ref`,
  // depth-first in source order. Notes REQUIRES_NEW, NOT_SUPPORTED and self-invocation on the way.
  void reach(const MethodRef& ref, const std::vector<std::size_t>& calls, std::vector<PathStep> path, int depth,
             bool want_db, bool in_tx, std::set<const Method*>& seen, std::vector<Reached>& out) {
    const Method& m = *ref.method;
    const TypeDecl& t = *ref.type;
    if (--budget_ < 0) return;  // a call graph too wide to walk from one entry: stop, find nothing more
    if (in_tx) in_tx_.insert(&m);
    for (std::size_t i : calls) {
      const Call& c = m.calls[i];
      if (c.in_lambda && async_parent(m, c, t)) continue;
      const Resolved r = resolve(t, m, c);
      if (r.kind == Resolved::Kind::remote || (want_db && r.kind == Resolved::Kind::db)) {
        auto p = path;
        p.push_back(step(t, c.line, call_text(c) + " (" + r.what + ")"));
        out.push_back({std::move(p), r.what, t.file, c.line});
        continue;
      }
      if (r.kind == Resolved::Kind::unresolved) {
        // Say so only when one of the candidates would lead on to a remote call.
        for (const auto& cand : r.candidates) {
          std::vector<Reached> sub;
          std::set<const Method*> s2 = seen;
          reach(cand, all_calls(*cand.method), {}, depth + 1, false, false, s2, sub);
          if (!sub.empty() && unresolved_seen_.insert({t.file, c.line}).second) {
            Finding f;
            f.level = Finding::Level::note;
            f.kind = "unresolved";
            f.file = t.file;
            f.line = c.line;
            f.message = "unresolved: " + call_text(c) + ": " + r.what + ", and one of them reaches a remote call (" +
                        sub.front().what + "); the path is not followed, nothing is guessed";
            f.path = path;
            f.path.push_back(step(t, c.line, call_text(c) + " (unresolved)"));
            out_.push_back(std::move(f));
            break;
          }
        }
        continue;
      }
      if (r.kind != Resolved::Kind::method || depth >= o_.depth || seen.count(r.target.method)) continue;
      const Method& callee = *r.target.method;
      std::string note = r.target.type->name + "." + callee.name;
      if (const Annotation* a = find_annotation(callee.annotations, "Transactional")) {
        const TxAttr x = tx_of_annotation(*a);
        if (r.self)
          note += " (self-invocation: its " + x.text() + " is bypassed by the proxy, it runs in the caller's transaction)";
        else if (in_tx && x.propagation == "REQUIRES_NEW")
          note += " (" + x.text() + ": a second connection while the caller's stays held)";
        else if (in_tx && (x.propagation == "NOT_SUPPORTED" || x.propagation == "NEVER"))
          note += " (" + x.text() + ": the transaction is suspended, its connection stays held)";
      } else if (r.self) {
        note += " (self-invocation)";
      }
      auto p = path;
      p.push_back(step(t, c.line, call_text(c)));
      p.push_back(step(*r.target.type, callee.line, note));
      seen.insert(&callee);
      reach(r.target, all_calls(callee), std::move(p), depth + 1, want_db, in_tx, seen, out);
      seen.erase(&callee);
    }
  }

  static std::vector<std::size_t> all_calls(const Method& m) {
    std::vector<std::size_t> v(m.calls.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
    return v;
  }

  // --- remote call inside a transaction ---------------------------------

  void remote_in_tx() {
    struct Entry {
      MethodRef ref;
      std::vector<Reached> reached;
      std::string head;
      int line;
      bool read_only;
    };
    std::vector<Entry> entries;
    for (const auto& ref : all_methods_) {
      const TypeDecl& t = *ref.type;
      const Method& m = *ref.method;
      if (!m.has_body || t.kind == TypeDecl::Kind::interface_) continue;
      const TxAttr tx = tx_attr(t, m);
      const bool listener = is_tx_event_listener_after_commit(m) || has_annotation(m.annotations, "Async");
      if (tx.starts() && !listener) {
        std::set<const Method*> seen{&m};
        std::vector<Reached> reached;
        budget_ = kWalkBudget;
        reach(ref, all_calls(m), {step(t, m.line, t.name + "." + m.name + " (" + tx.text() + ")")}, 0, false, true,
              seen, reached);
        if (!reached.empty()) entries.push_back({ref, std::move(reached), t.name + "." + m.name + " (" + tx.text() + ")", m.line, tx.read_only});
        continue;
      }
      // TransactionTemplate blocks in a method without a transaction of its own.
      std::map<int, std::vector<std::size_t>> blocks;
      for (std::size_t i = 0; i < m.calls.size(); ++i) {
        const int p = tx_template_parent(m, m.calls[i], t);
        if (p >= 0) blocks[p].push_back(i);
      }
      for (const auto& [p, calls] : blocks) {
        const Call& tc = m.calls[static_cast<std::size_t>(p)];
        std::set<const Method*> seen{&m};
        std::vector<Reached> reached;
        const std::string head = t.name + "." + m.name + ": " + call_text(tc) + " (a TransactionTemplate block)";
        budget_ = kWalkBudget;
        reach(ref, calls, {step(t, tc.line, head)}, 0, false, true, seen, reached);
        if (!reached.empty()) entries.push_back({ref, std::move(reached), head, tc.line, false});
      }
      // A JDBC transaction by hand: Connection.setAutoCommit(false) up to that
      // connection's commit() in source order (a rollback() on an error branch
      // does not end the happy path).
      for (std::size_t i = 0; i < m.calls.size(); ++i) {
        const Call& c = m.calls[i];
        static const std::regex off(R"(^\(\s*false\s*\)$)");
        if (c.names.size() != 1 || c.names[0] != "setAutoCommit" || !std::regex_search(c.args_text, off) ||
            type_of(c.root, m, t, c) != "Connection")
          continue;
        std::vector<std::size_t> calls;
        for (std::size_t j = i + 1; j < m.calls.size(); ++j) {
          const Call& d = m.calls[j];
          if (d.root == c.root && d.names.size() == 1 && d.names[0] == "commit") break;
          calls.push_back(j);
        }
        std::set<const Method*> seen{&m};
        std::vector<Reached> reached;
        const std::string head =
            t.name + "." + m.name + ": " + c.root + ".setAutoCommit(false) (a JDBC transaction until " + c.root + ".commit())";
        budget_ = kWalkBudget;
        reach(ref, calls, {step(t, c.line, head)}, 0, false, true, seen, reached);
        if (!reached.empty()) entries.push_back({ref, std::move(reached), head, c.line, false});
      }
    }
    // One finding per first remote call site: the entry with the shortest path, the others named.
    std::map<std::pair<std::string, int>, std::vector<const Entry*>> by_site;
    // The site is the entry's own call that leads there (path[1]): where the fix goes.
    for (const auto& e : entries) {
      const PathStep& at = e.reached.front().path.size() > 1 ? e.reached.front().path[1] : e.reached.front().path[0];
      by_site[{at.file, at.line}].push_back(&e);
    }
    for (auto& [site, es] : by_site) {
      std::stable_sort(es.begin(), es.end(), [](const Entry* a, const Entry* b) {
        return a->reached.front().path.size() < b->reached.front().path.size();
      });
      const Entry& e = *es.front();
      Finding f;
      f.kind = "remote-in-tx";
      f.file = site.first;
      f.line = site.second;
      f.path = e.reached.front().path;
      f.remote_calls = static_cast<int>(e.reached.size());
      std::string calls;
      for (std::size_t i = 0; i < e.reached.size() && i < 4; ++i)
        calls += (i ? ", " : "") + e.reached[i].what + " (" + e.reached[i].file + ":" + std::to_string(e.reached[i].line) + ")";
      if (e.reached.size() > 4) calls += ", …";
      f.message = e.head + " holds its transaction, and the pooled connection, through " +
                  std::to_string(e.reached.size()) + (e.reached.size() == 1 ? " remote call: " : " remote calls: ") + calls;
      if (e.read_only) f.message += "; readOnly does not release the connection";
      for (const auto& p : f.path)
        if (contains(p.text, "bypassed by the proxy")) {  // a helper of its own, without attributes, changes nothing
          f.message += "; on the path a self-invocation bypasses the proxy";
          break;
        }
      if (es.size() > 1) {
        f.message += "; also inside the transactions of";
        for (std::size_t i = 1; i < es.size(); ++i)
          f.message += (i > 1 ? ", " : " ") + es[i]->ref.type->name + "." + es[i]->ref.method->name;
      }
      f.family = "held-tx";
      f.strategy = "held-tx:wait";
      f.fix = "make the call outside the transaction: split-tx (lockbench explain split-tx), an outbox "
              "(lockbench explain outbox), or a row lease (lockbench explain row-lease)";
      out_.push_back(std::move(f));
    }
  }

  // --- synchronized / ReentrantLock -------------------------------------

  static bool lock_type(const std::string& type) {
    return type == "ReentrantLock" || type == "Lock" || type == "ReentrantReadWriteLock" || type == "ReadWriteLock" ||
           type == "StampedLock";
  }

  void synchronized_lock(const MethodRef& ref) {
    const TypeDecl& t = *ref.type;
    const Method& m = *ref.method;
    if (!m.has_body || !is_spring_bean(t) || has_annotation(m.annotations, "SchedulerLock")) return;
    struct Region {
      int line;
      std::string head;
      bool monitor;
      std::vector<std::size_t> calls;
    };
    std::vector<Region> regions;
    if (m.is_synchronized)
      regions.push_back({m.line, t.name + "." + m.name + " (synchronized method)", true, all_calls(m)});
    for (std::size_t b = 0; b < m.sync_blocks.size(); ++b) {
      Region r{m.sync_blocks[b].line, t.name + "." + m.name + ": synchronized (" + m.sync_blocks[b].lock_text + ")", true, {}};
      for (std::size_t i = 0; i < m.calls.size(); ++i)
        if (m.calls[i].sync_block == static_cast<int>(b)) r.calls.push_back(i);
      regions.push_back(std::move(r));
    }
    // ReentrantLock: from lock() to unlock(), in source order.
    for (std::size_t i = 0; i < m.calls.size(); ++i) {
      const Call& c = m.calls[i];
      if (!lock_type(type_of(c.root, m, t, c)) || !any_name(c, {"lock", "lockInterruptibly", "tryLock"})) continue;
      Region r{c.line, t.name + "." + m.name + ": " + call_text(c) + " (" + type_of(c.root, m, t, c) + ")", false, {}};
      for (std::size_t j = i + 1; j < m.calls.size(); ++j) {
        const Call& d = m.calls[j];
        if (d.root == c.root && any_name(d, {"unlock"})) break;
        r.calls.push_back(j);
      }
      regions.push_back(std::move(r));
    }
    for (const auto& r : regions) {
      std::set<const Method*> seen{&m};
      std::vector<Reached> reached;
      budget_ = kWalkBudget;
      reach(ref, r.calls, {step(t, r.line, r.head)}, 0, true, false, seen, reached);
      if (reached.empty()) continue;
      Finding f;
      f.kind = "synchronized";
      f.file = t.file;
      f.line = r.line;
      f.path = reached.front().path;
      f.message = r.head + " in a Spring bean around " + reached.front().what +
                  ": a lock in one JVM, it excludes within one pod only; the other pods run the same code at once";
      f.pins = r.monitor && o_.virtual_threads && (o_.jdk == 0 || o_.jdk < 24);
      if (f.pins)
        f.message += o_.jdk ? "; with spring.threads.virtual.enabled on JDK " + std::to_string(o_.jdk) +
                                  " it also pins the carrier thread through the call (JDK 24 lifts it, JEP 491)"
                            : "; with spring.threads.virtual.enabled it also pins the carrier thread through the call on "
                              "a JDK below 24 (the JDK is not known: --jdk)";
      f.family = "synchronized";
      f.strategy = "synchronized:wait";
      f.fix = "a lock every pod sees: a row lease (lockbench explain row-lease) or advisory-xact "
              "(lockbench explain advisory-xact)";
      out_.push_back(std::move(f));
    }
  }

  // --- advisory locks ----------------------------------------------------

  // The SQL a call sends: its arguments, the string constants they name, a repository method's @Query.
  std::string sql_of(const TypeDecl& t, const Method& m, const Call& c) const {
    std::string sql = c.args_text;
    for (const auto& f : t.fields)
      if (!f.init.empty() && contains(c.args_text, f.name)) sql += " " + f.init;
    const std::string type = type_of(c.root, m, t, c);
    if (!c.names.empty() && index_.repository(type))
      if (const TypeDecl* repo = index_.type(type, t))
        if (const Method* rm = find_method(*repo, c.names[0], c.arg_count))
          if (const Annotation* q = find_annotation(rm->annotations, "Query")) sql += " " + q->args;
    return lower(sql);
  }

  bool pooled(const TypeDecl& t, const Method& m, const Call& c) const {
    const std::string type = type_of(c.root, m, t, c);
    return type != "Connection" && type != "PreparedStatement" && type != "Statement";
  }

  bool in_transaction(const TypeDecl& t, const Method& m, const Call& c) const {
    return tx_attr(t, m).starts() || in_tx_.count(&m) || tx_template_parent(m, c, t) >= 0;
  }

  void advisory(const MethodRef& ref) {
    const TypeDecl& t = *ref.type;
    const Method& m = *ref.method;
    std::vector<std::size_t> locks, unlocks, xacts;
    for (std::size_t i = 0; i < m.calls.size(); ++i) {
      const std::string sql = sql_of(t, m, m.calls[i]);
      if (!contains(sql, "pg_") || !contains(sql, "advisory")) continue;
      // Called, not named: `CREATE ALIAS pg_try_advisory_xact_lock FOR ...` takes no lock.
      static const std::regex unlock(R"(pg_advisory_unlock(_shared|_all)?\s*\()", std::regex::icase);
      static const std::regex xact(R"(pg_(try_)?advisory_xact_lock(_shared)?\s*\()", std::regex::icase);
      static const std::regex session(R"(pg_(try_)?advisory_lock(_shared)?\s*\()", std::regex::icase);
      if (std::regex_search(sql, unlock))
        unlocks.push_back(i);
      else if (std::regex_search(sql, xact))
        xacts.push_back(i);
      else if (std::regex_search(sql, session))
        locks.push_back(i);
    }
    if (locks.empty() && unlocks.empty() && xacts.empty()) return;
    const auto add = [&](const Call& c, std::string msg, std::string family) {
      Finding f;
      f.kind = "advisory-lock";
      f.file = t.file;
      f.line = c.line;
      f.path = {step(t, m.line, t.name + "." + m.name), step(t, c.line, call_text(c))};
      f.message = t.name + "." + m.name + ": " + msg;
      f.family = family;
      f.strategy = family == "advisory-xact" ? "none" : "advisory-session:pooled";
      f.fix = family == "advisory-xact"
                  ? "take pg_advisory_xact_lock inside the @Transactional method that does the work (lockbench explain advisory-xact)"
                  : "pg_advisory_xact_lock in the transaction (lockbench explain advisory-xact), or lock and unlock on one "
                    "connection held for the work, unlock in finally (advisory-session:pinned)";
      out_.push_back(std::move(f));
    };
    bool hash_key = false;
    for (const auto& c : m.calls)
      if (any_name(c, {"hashCode"})) hash_key = true;
    for (std::size_t i : locks) {
      const Call& c = m.calls[i];
      if (pooled(t, m, c) && !in_transaction(t, m, c))
        add(c,
            unlocks.empty()
                ? "pg_advisory_lock on a pooled connection, and the unlock is not in this method: the unlock can run on "
                  "another connection, and the lock stays on the one given back to the pool"
                : "pg_advisory_lock and pg_advisory_unlock through the pool, outside a transaction: each statement may "
                  "borrow a different connection, so the unlock can miss and the lock stays on a pooled connection",
            "advisory-session");
    }
    if (!locks.empty())
      for (std::size_t i : unlocks)
        if (!m.calls[i].in_finally)
          add(m.calls[i],
              "pg_advisory_unlock outside finally: an exception between lock and unlock leaves the session lock on the "
              "pooled connection",
              "advisory-session");
    for (std::size_t i : xacts) {
      const Call& c = m.calls[i];
      if (!in_transaction(t, m, c))
        add(c,
            "pg_advisory_xact_lock outside a transaction: in autocommit the lock is released when the statement ends, "
            "so it excludes nothing",
            "advisory-xact");
    }
    if (hash_key)
      for (std::size_t i : locks.empty() ? xacts : locks)
        add(m.calls[i],
            "the advisory lock key comes from hashCode(): 32 bits, so two different keys collide and exclude each other "
            "(and String.hashCode collisions are easy to make)",
            locks.empty() ? "advisory-xact" : "advisory-session");
  }

  // --- ORM-mapped lease and optimistic locking without a version ---------

  static bool lease_field(const Variable& f) {
    static const std::regex re(R"(^(locked|lock|lease|leased)_?(at|until|owner|by|holder|expires|expiresat|expiry|token|till)$)",
                               std::regex::icase);
    if (f.is_static || has_annotation(f.annotations, "Transient")) return false;
    if (const Annotation* col = find_annotation(f.annotations, "Column")) {
      static const std::regex ro(R"(updatable\s*=\s*false)");
      if (std::regex_search(col->args, ro)) return false;
    }
    return std::regex_search(f.name, re);
  }

  // The entity a call loads or saves, through its repository (or EntityManager.find(E.class)).
  std::string entity_of(const TypeDecl& t, const Method& m, const Call& c) const {
    const std::string type = type_of(c.root, m, t, c);
    if (type == "EntityManager" && !c.names.empty() && c.names[0] == "find") {
      static const std::regex cls(R"(([A-Z]\w*)\.class)");
      std::smatch mt;
      if (std::regex_search(c.args_text, mt, cls)) return mt[1];
    }
    if (type == "EntityManager" && !c.names.empty() && (c.names[0] == "merge" || c.names[0] == "persist")) {
      static const std::regex var(R"(^\(\s*(\w+)\s*\)$)");
      std::smatch mt;
      if (std::regex_search(c.args_text, mt, var)) return type_of(mt[1], m, t, c);
      return "";
    }
    if (!index_.repository(type)) return "";
    return index_.repository_entity(type);
  }
  static bool loads(const Call& c) {
    if (c.names.empty()) return false;
    const auto& n = c.names[0];
    return starts_with(n, "find") || starts_with(n, "get") || starts_with(n, "read") || starts_with(n, "load") ||
           starts_with(n, "query");
  }
  static bool saves(const Call& c) {
    return !c.names.empty() && (c.names[0] == "save" || c.names[0] == "saveAndFlush" || c.names[0] == "merge");
  }

  void orm_lease(const MethodRef& ref) {
    const TypeDecl& t = *ref.type;
    const Method& m = *ref.method;
    std::map<std::string, const Call*> loaded;
    for (const auto& c : m.calls) {
      const std::string e = entity_of(t, m, c);
      if (e.empty()) continue;
      const TypeDecl* entity = index_.entity(e);
      if (!entity) continue;
      std::vector<std::string> lease;
      for (const auto& f : entity->fields)
        if (lease_field(f)) lease.push_back(f.name);
      if (lease.empty()) continue;
      if (loads(c) && !loaded.count(e)) loaded[e] = &c;
      if (saves(c) && loaded.count(e)) {
        Finding f;
        f.kind = "orm-lease";
        f.file = t.file;
        f.line = c.line;
        const Call& ld = *loaded[e];
        f.path = {step(t, m.line, t.name + "." + m.name), step(t, ld.line, call_text(ld) + " (loads " + e + ")"),
                  step(t, c.line, call_text(c) + " (writes every mapped column of " + e + " back)")};
        std::string cols;
        for (const auto& l : lease) cols += (cols.empty() ? "" : ", ") + l;
        f.message = t.name + "." + m.name + " loads " + e + " and save()s it, and " + e + " maps its lease columns (" +
                    cols + ", " + entity->file + ":" + std::to_string(entity->line) +
                    "): the save writes back the lease as it was loaded, releasing or overwriting a lease another "
                    "worker took meanwhile";
        f.family = "row-lease";
        f.strategy = "row-lease:orm-mapped";
        f.fix = "keep the lease out of the entity (@Column(insertable = false, updatable = false), or a table of its own) "
                "and take it with a conditional @Modifying UPDATE (lockbench explain row-lease)";
        out_.push_back(std::move(f));
        loaded.erase(e);
      }
    }
  }

  void optimistic(const MethodRef& ref) {
    const TypeDecl& t = *ref.type;
    const Method& m = *ref.method;
    if (!m.has_body) return;
    const Call* load = nullptr;
    std::string entity_name;
    for (const auto& c : m.calls) {
      const std::string e = entity_of(t, m, c);
      const TypeDecl* entity = e.empty() ? nullptr : index_.entity(e);
      if (!entity || !loads(c)) continue;
      bool versioned = false;
      for (const auto& f : entity->fields)
        if (has_annotation(f.annotations, "Version")) versioned = true;
      if (versioned) continue;
      load = &c;
      entity_name = e;
      break;
    }
    if (!load) return;
    // Modified: a setter on a local of the entity's type; written: save(), or the dirty check of a transaction.
    const Call* write = nullptr;
    bool modified = false;
    for (const auto& c : m.calls) {
      if (c.line < load->line) continue;
      if (!c.names.empty() && starts_with(c.names[0], "set") && type_of(c.root, m, t, c) == entity_name) modified = true;
      if (saves(c) && entity_of(t, m, c) == entity_name) write = &c;
    }
    if (!modified && !write) return;
    if (!write && !tx_attr(t, m).starts()) return;
    std::set<const Method*> seen{&m};
    std::vector<Reached> reached;
    budget_ = kWalkBudget;
    reach(ref, all_calls(m), {step(t, m.line, t.name + "." + m.name)}, 0, false, false, seen, reached);
    if (reached.empty()) return;
    Finding f;
    f.kind = "optimistic-no-version";
    f.file = t.file;
    f.line = write ? write->line : load->line;
    f.path = {step(t, m.line, t.name + "." + m.name), step(t, load->line, call_text(*load) + " (reads " + entity_name + ")")};
    f.path.insert(f.path.end(), reached.front().path.begin() + 1, reached.front().path.end());
    if (write) f.path.push_back(step(t, write->line, call_text(*write) + " (writes " + entity_name + " back)"));
    f.message = t.name + "." + m.name + " reads " + entity_name + ", calls a partner (" + reached.front().what +
                ") and writes " + entity_name + " back, and " + entity_name +
                " has no @Version: two requests both pass the check and the last write wins (a lost update, a double call)";
    f.family = "optimistic";
    f.strategy = "none";
    f.fix = "a @Version field, so the second write fails (lockbench explain optimistic), or a lock around the call";
    out_.push_back(std::move(f));
  }
};

}  // namespace

std::vector<Finding> analyze(const std::vector<JavaFile>& files, const AnalyzeOptions& options) {
  return Analyzer(files, options).run();
}

}  // namespace lockbench::lint_code
