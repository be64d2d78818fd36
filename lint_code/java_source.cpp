#include "lint_code/java_source.hpp"

#include <cstring>

#if LOCKBENCH_HAVE_JAVA_GRAMMAR
#include <tree_sitter/api.h>
extern "C" const TSLanguage* tree_sitter_java(void);
#endif

namespace lockbench::lint_code {

bool has_annotation(const std::vector<Annotation>& as, std::string_view name) {
  return find_annotation(as, name) != nullptr;
}

const Annotation* find_annotation(const std::vector<Annotation>& as, std::string_view name) {
  for (const auto& a : as)
    if (a.name == name) return &a;
  return nullptr;
}

#if !LOCKBENCH_HAVE_JAVA_GRAMMAR

bool java_grammar_available() { return false; }
JavaFile parse_java(std::string_view, const std::string& path) {
  JavaFile f;
  f.path = path;
  return f;
}

#else

bool java_grammar_available() { return true; }

namespace {

// "java.util.List<Foo>" -> "List"; "byte[]" -> "byte".
std::string simple_type(std::string_view t) {
  if (const auto lt = t.find('<'); lt != std::string_view::npos) t = t.substr(0, lt);
  if (const auto br = t.find('['); br != std::string_view::npos) t = t.substr(0, br);
  while (!t.empty() && (t.back() == ' ' || t.back() == '.')) t.remove_suffix(1);
  if (const auto dot = t.rfind('.'); dot != std::string_view::npos) t = t.substr(dot + 1);
  if (const auto sp = t.rfind(' '); sp != std::string_view::npos) t = t.substr(sp + 1);  // "@NonNull Foo"
  return std::string(t);
}

bool is(TSNode n, const char* type) { return std::strcmp(ts_node_type(n), type) == 0; }

class Reader {
 public:
  Reader(std::string_view src, JavaFile& out) : src_(src), out_(out) {}

  void program(TSNode root) { declarations(root, nullptr); }

 private:
  std::string_view src_;
  JavaFile& out_;

  std::string_view text(TSNode n) const {
    const auto b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return e <= src_.size() && b <= e ? src_.substr(b, e - b) : std::string_view{};
  }
  static int line(TSNode n) { return static_cast<int>(ts_node_start_point(n).row) + 1; }
  void error_at(TSNode n) {
    const int l = line(n);
    if (out_.error_lines.empty() || out_.error_lines.back() != l) out_.error_lines.push_back(l);
  }

  // Top level, a type's body, or an ERROR node standing for either.
  void declarations(TSNode parent, TypeDecl* enclosing) {
    const uint32_t n = ts_node_child_count(parent);
    for (uint32_t i = 0; i < n; ++i) {
      TSNode c = ts_node_child(parent, i);
      if (ts_node_is_missing(c)) error_at(c);
      if (!ts_node_is_named(c)) continue;
      const char* t = ts_node_type(c);
      if (!std::strcmp(t, "package_declaration")) {
        for (uint32_t k = 0; k < ts_node_named_child_count(c); ++k) {
          TSNode id = ts_node_named_child(c, k);
          if (is(id, "scoped_identifier") || is(id, "identifier")) out_.package = std::string(text(id));
        }
      } else if (!std::strcmp(t, "import_declaration")) {
        std::string imp;
        for (uint32_t k = 0; k < ts_node_named_child_count(c); ++k) {
          TSNode id = ts_node_named_child(c, k);
          if (is(id, "scoped_identifier") || is(id, "identifier")) imp = std::string(text(id));
        }
        if (!imp.empty()) out_.imports.push_back(imp);
      } else if (!std::strcmp(t, "class_declaration") || !std::strcmp(t, "interface_declaration") ||
                 !std::strcmp(t, "enum_declaration") || !std::strcmp(t, "record_declaration") ||
                 !std::strcmp(t, "annotation_type_declaration")) {
        type_decl(c);
      } else if (enclosing && (!std::strcmp(t, "field_declaration") || !std::strcmp(t, "constant_declaration"))) {
        field(c, *enclosing);
      } else if (enclosing && (!std::strcmp(t, "method_declaration") || !std::strcmp(t, "constructor_declaration") ||
                               !std::strcmp(t, "compact_constructor_declaration"))) {
        method(c, *enclosing);
      } else if (!std::strcmp(t, "enum_body_declarations") && enclosing) {
        declarations(c, enclosing);
      } else if (!std::strcmp(t, "ERROR")) {
        error_at(c);
        declarations(c, enclosing);
      } else if (ts_node_has_error(c)) {
        find_errors(c);
      }
    }
  }

  void find_errors(TSNode n) {
    if (is(n, "ERROR") || ts_node_is_missing(n)) {
      error_at(n);
      return;
    }
    if (!ts_node_has_error(n)) return;
    for (uint32_t i = 0; i < ts_node_child_count(n); ++i) find_errors(ts_node_child(n, i));
  }

  void modifiers(TSNode mods, std::vector<Annotation>& anns, Method* m, bool* is_static) {
    for (uint32_t i = 0; i < ts_node_child_count(mods); ++i) {
      TSNode c = ts_node_child(mods, i);
      const char* t = ts_node_type(c);
      if (!std::strcmp(t, "annotation") || !std::strcmp(t, "marker_annotation")) {
        Annotation a;
        TSNode name = ts_node_child_by_field_name(c, "name", 4);
        a.name = simple_type(text(name));
        TSNode args = ts_node_child_by_field_name(c, "arguments", 9);
        if (!ts_node_is_null(args)) {
          std::string_view s = text(args);
          if (s.size() >= 2) s = s.substr(1, s.size() - 2);
          a.args = std::string(s);
        }
        a.line = line(c);
        anns.push_back(std::move(a));
      } else if (!std::strcmp(t, "static")) {
        if (is_static) *is_static = true;
        if (m) m->is_static = true;
      } else if (m && !std::strcmp(t, "private")) {
        m->is_private = true;
      } else if (m && !std::strcmp(t, "synchronized")) {
        m->is_synchronized = true;
      }
    }
  }

  TSNode child_of_type(TSNode n, const char* type) const {
    for (uint32_t i = 0; i < ts_node_child_count(n); ++i)
      if (is(ts_node_child(n, i), type)) return ts_node_child(n, i);
    return TSNode{};
  }

  void supertypes(TSNode n, TypeDecl& d) {
    const char* t = ts_node_type(n);
    if (!std::strcmp(t, "type_identifier") || !std::strcmp(t, "generic_type") ||
        !std::strcmp(t, "scoped_type_identifier")) {
      d.supertypes.push_back(simple_type(text(n)));
      d.supertype_texts.emplace_back(text(n));
      return;
    }
    for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) supertypes(ts_node_named_child(n, i), d);
  }

  void type_decl(TSNode c) {
    TypeDecl d;
    const char* t = ts_node_type(c);
    d.kind = !std::strcmp(t, "interface_declaration") || !std::strcmp(t, "annotation_type_declaration")
                 ? TypeDecl::Kind::interface_
             : !std::strcmp(t, "enum_declaration")   ? TypeDecl::Kind::enum_
             : !std::strcmp(t, "record_declaration") ? TypeDecl::Kind::record_
                                                     : TypeDecl::Kind::class_;
    TSNode name = ts_node_child_by_field_name(c, "name", 4);
    d.name = std::string(text(name));
    d.package = out_.package;
    d.file = out_.path;
    d.line = ts_node_is_null(name) ? line(c) : line(name);
    TSNode mods = child_of_type(c, "modifiers");
    if (!ts_node_is_null(mods)) modifiers(mods, d.annotations, nullptr, nullptr);
    for (const char* s : {"superclass", "super_interfaces", "extends_interfaces"}) {
      TSNode sup = child_of_type(c, s);
      if (!ts_node_is_null(sup)) supertypes(sup, d);
    }
    TSNode body = ts_node_child_by_field_name(c, "body", 4);
    const std::size_t at = out_.types.size();
    out_.types.push_back(std::move(d));
    if (!ts_node_is_null(body)) {
      // Nested types are appended after this one while it is filled: fill a
      // copy, then put it back at its index.
      TypeDecl filled = std::move(out_.types[at]);
      declarations(body, &filled);
      out_.types[at] = std::move(filled);
    }
  }

  void field(TSNode c, TypeDecl& d) {
    std::vector<Annotation> anns;
    bool is_static = false;
    TSNode mods = child_of_type(c, "modifiers");
    if (!ts_node_is_null(mods)) modifiers(mods, anns, nullptr, &is_static);
    TSNode type = ts_node_child_by_field_name(c, "type", 4);
    for (uint32_t i = 0; i < ts_node_child_count(c); ++i) {
      TSNode v = ts_node_child(c, i);
      if (!is(v, "variable_declarator")) continue;
      Variable var{simple_type(text(type)), std::string(text(type)),
                   std::string(text(ts_node_child_by_field_name(v, "name", 4))), anns, is_static, line(v), ""};
      TSNode value = ts_node_child_by_field_name(v, "value", 5);
      if (!ts_node_is_null(value)) {
        var.init = std::string(text(value).substr(0, 500));
        if (ts_node_has_error(value)) find_errors(value);
      }
      d.fields.push_back(std::move(var));
    }
  }

  void params(TSNode ps, Method& m) {
    for (uint32_t i = 0; i < ts_node_named_child_count(ps); ++i) {
      TSNode p = ts_node_named_child(ps, i);
      if (!is(p, "formal_parameter") && !is(p, "spread_parameter")) continue;
      Variable v;
      TSNode mods = child_of_type(p, "modifiers");
      if (!ts_node_is_null(mods)) modifiers(mods, v.annotations, nullptr, nullptr);
      TSNode type = ts_node_child_by_field_name(p, "type", 4);
      if (ts_node_is_null(type) && ts_node_named_child_count(p) > 0) type = ts_node_named_child(p, 0);
      v.type = simple_type(text(type));
      v.type_text = std::string(text(type));
      TSNode name = ts_node_child_by_field_name(p, "name", 4);
      if (ts_node_is_null(name)) {
        TSNode decl = child_of_type(p, "variable_declarator");
        if (!ts_node_is_null(decl)) name = ts_node_child_by_field_name(decl, "name", 4);
      }
      v.name = std::string(text(name));
      v.line = line(p);
      m.params.push_back(std::move(v));
    }
    m.param_count = static_cast<int>(m.params.size());
  }

  void method(TSNode c, TypeDecl& d) {
    Method m;
    m.is_constructor = !is(c, "method_declaration");
    TSNode name = ts_node_child_by_field_name(c, "name", 4);
    m.name = m.is_constructor ? "<init>" : std::string(text(name));
    m.line = ts_node_is_null(name) ? line(c) : line(name);  // the name's line, not its annotations'

    m.end_line = static_cast<int>(ts_node_end_point(c).row) + 1;
    TSNode mods = child_of_type(c, "modifiers");
    if (!ts_node_is_null(mods)) modifiers(mods, m.annotations, &m, nullptr);
    TSNode ps = ts_node_child_by_field_name(c, "parameters", 10);
    if (!ts_node_is_null(ps)) params(ps, m);
    TSNode body = ts_node_child_by_field_name(c, "body", 4);
    if (!ts_node_is_null(body)) {
      m.has_body = true;
      Ctx ctx;
      statements(body, m, ctx);
    }
    d.methods.push_back(std::move(m));
  }

  struct Ctx {
    int parent = -1;
    int sync_block = -1;
    bool in_finally = false;
    bool in_lambda = false;
  };

  void local(TSNode c, Method& m) {
    TSNode type = ts_node_child_by_field_name(c, "type", 4);
    for (uint32_t i = 0; i < ts_node_child_count(c); ++i) {
      TSNode v = ts_node_child(c, i);
      if (!is(v, "variable_declarator")) continue;
      std::string simple = simple_type(text(type)), as_written(text(type));
      if (simple == "var") {  // `var tx = new TransactionTemplate(...)`: the type is the created one's
        TSNode value = ts_node_child_by_field_name(v, "value", 5);
        if (!ts_node_is_null(value) && is(value, "object_creation_expression")) {
          TSNode created = ts_node_child_by_field_name(value, "type", 4);
          if (!ts_node_is_null(created)) simple = simple_type(text(created)), as_written = std::string(text(created));
        }
      }
      m.locals.push_back({simple, as_written, std::string(text(ts_node_child_by_field_name(v, "name", 4))), {}, false,
                          line(v), ""});
    }
  }

  // Any statement or expression: finds the calls and the places they sit in.
  void statements(TSNode n, Method& m, Ctx ctx) {
    if (ts_node_is_missing(n)) {
      error_at(n);
      return;
    }
    const char* t = ts_node_type(n);
    if (!std::strcmp(t, "ERROR")) error_at(n);
    if (!std::strcmp(t, "method_invocation")) {
      invocation(n, m, ctx);
      return;
    }
    if (!std::strcmp(t, "local_variable_declaration")) local(n, m);
    if (!std::strcmp(t, "resource")) {
      TSNode type = ts_node_child_by_field_name(n, "type", 4);
      TSNode name = ts_node_child_by_field_name(n, "name", 4);
      if (!ts_node_is_null(type) && !ts_node_is_null(name))
        m.locals.push_back({simple_type(text(type)), std::string(text(type)), std::string(text(name)), {}, false, line(n), ""});
    }
    if (!std::strcmp(t, "class_declaration") || !std::strcmp(t, "interface_declaration") ||
        !std::strcmp(t, "record_declaration") || !std::strcmp(t, "enum_declaration")) {
      type_decl(n);  // a local class: a type of its own
      return;
    }
    if (!std::strcmp(t, "synchronized_statement")) {
      SyncBlock b;
      for (uint32_t i = 0; i < ts_node_named_child_count(n); ++i) {
        TSNode c = ts_node_named_child(n, i);
        if (is(c, "parenthesized_expression")) {
          std::string_view s = text(c);
          if (s.size() >= 2) s = s.substr(1, s.size() - 2);
          b.lock_text = std::string(s);
        }
      }
      b.line = line(n);
      m.sync_blocks.push_back(b);
      Ctx inner = ctx;
      inner.sync_block = static_cast<int>(m.sync_blocks.size()) - 1;
      for (uint32_t i = 0; i < ts_node_child_count(n); ++i) statements(ts_node_child(n, i), m, inner);
      return;
    }
    if (!std::strcmp(t, "finally_clause")) ctx.in_finally = true;
    if (!std::strcmp(t, "lambda_expression") || !std::strcmp(t, "class_body")) ctx.in_lambda = true;
    for (uint32_t i = 0; i < ts_node_child_count(n); ++i) statements(ts_node_child(n, i), m, ctx);
  }

  void invocation(TSNode n, Method& m, Ctx ctx) {
    std::vector<TSNode> chain;  // outermost first
    TSNode cur = n;
    while (is(cur, "method_invocation")) {
      chain.push_back(cur);
      TSNode obj = ts_node_child_by_field_name(cur, "object", 6);
      if (ts_node_is_null(obj)) break;
      cur = obj;
    }
    Call call;
    TSNode innermost = chain.back();
    TSNode root = ts_node_child_by_field_name(innermost, "object", 6);
    TSNode root_to_visit{};
    if (ts_node_is_null(root)) {
      call.root = "";
    } else if (is(root, "identifier") || is(root, "this") || is(root, "super")) {
      call.root = std::string(text(root));
    } else if (is(root, "field_access")) {
      TSNode obj = ts_node_child_by_field_name(root, "object", 6);
      TSNode fld = ts_node_child_by_field_name(root, "field", 5);
      if (!ts_node_is_null(obj) && is(obj, "this"))
        call.root = std::string(text(fld));
      else
        call.root = std::string(text(root));
    } else if (is(root, "object_creation_expression")) {
      call.root = "new " + simple_type(text(ts_node_child_by_field_name(root, "type", 4)));
      root_to_visit = root;
    } else {
      call.root = std::string(text(root)).substr(0, 80);
      root_to_visit = root;
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it)
      call.names.emplace_back(text(ts_node_child_by_field_name(*it, "name", 4)));
    TSNode args = ts_node_child_by_field_name(innermost, "arguments", 9);
    if (!ts_node_is_null(args)) {
      call.arg_count = static_cast<int>(ts_node_named_child_count(args));
      std::string_view s = text(args);
      call.args_text = std::string(s.substr(0, 2000));
    }
    call.line = line(innermost);
    call.parent = ctx.parent;
    call.sync_block = ctx.sync_block;
    call.in_finally = ctx.in_finally;
    call.in_lambda = ctx.in_lambda;
    if (ts_node_has_error(n)) find_errors(n);
    m.calls.push_back(std::move(call));
    Ctx inner = ctx;
    inner.parent = static_cast<int>(m.calls.size()) - 1;
    if (!ts_node_is_null(root_to_visit)) statements(root_to_visit, m, ctx);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      TSNode a = ts_node_child_by_field_name(*it, "arguments", 9);
      if (!ts_node_is_null(a)) statements(a, m, inner);
    }
  }
};

}  // namespace

JavaFile parse_java(std::string_view text, const std::string& path) {
  JavaFile out;
  out.path = path;
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_java());
  TSTree* tree = ts_parser_parse_string(parser, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  if (tree) {
    Reader(text, out).program(ts_tree_root_node(tree));
    ts_tree_delete(tree);
  }
  ts_parser_delete(parser);
  return out;
}

#endif

}  // namespace lockbench::lint_code
