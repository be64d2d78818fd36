// A Java source file as lint --code needs it: its types, their annotations,
// fields and methods, and in each method the calls in source order with where
// they sit (inside a `synchronized` block, a `finally`, a lambda passed to
// another call). Built from tree-sitter's syntax tree (tree-sitter-java); a
// file with syntax errors is still read, the error nodes skipped and their
// lines kept as a note. Nothing here resolves a call: findings.cpp does that
// over every file of the tree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lockbench::lint_code {

struct Annotation {
  std::string name;  // simple name: "Transactional" for @org.springframework.transaction.annotation.Transactional
  std::string args;  // the text between the parentheses, as written ("" for a marker annotation)
  int line = 0;
};

struct Variable {
  std::string type;  // the declared type's simple name without generics ("RestTemplate", "List")
  std::string type_text;  // as written ("JpaRepository<Lease, Long>")
  std::string name;
  std::vector<Annotation> annotations;
  bool is_static = false;
  int line = 0;
  std::string init;  // a field's initializer as written (a SQL string constant), at most 500 characters
};

// One call chain `root.a(...).b(...).c(...)`: the names in order. A call's
// arguments are chains of their own, later in `Method::calls`.
struct Call {
  std::string root;                // "restTemplate", "this", "super", "" (unqualified), "HttpClient" (a type)
  std::vector<std::string> names;  // "exchange"; "get","uri","retrieve","block"
  int arg_count = 0;               // of the first call in the chain
  std::string args_text;           // the first call's arguments as written (SQL, hashCode())
  int line = 0;
  int parent = -1;        // index of the call whose lambda or anonymous class argument holds this one
  int sync_block = -1;    // index into Method::sync_blocks of the innermost enclosing synchronized block
  bool in_finally = false;
  bool in_lambda = false;  // inside a lambda or anonymous class body (may run later, elsewhere)
};

struct SyncBlock {
  std::string lock_text;  // "this", "cache", "LOCK"
  int line = 0;
};

struct Method {
  std::string name;
  int line = 0;
  int end_line = 0;
  bool is_private = false;
  bool is_static = false;
  bool is_synchronized = false;
  bool is_constructor = false;
  bool has_body = false;
  int param_count = 0;
  std::vector<Annotation> annotations;
  std::vector<Variable> params;
  std::vector<Variable> locals;
  std::vector<Call> calls;  // source order
  std::vector<SyncBlock> sync_blocks;
};

struct TypeDecl {
  enum class Kind { class_, interface_, enum_, record_ };
  Kind kind = Kind::class_;
  std::string name;
  std::string package;
  std::string file;
  int line = 0;
  std::vector<Annotation> annotations;
  std::vector<std::string> supertypes;       // simple names, extends and implements
  std::vector<std::string> supertype_texts;  // as written ("JpaRepository<Lease, Long>")
  std::vector<Variable> fields;
  std::vector<Method> methods;
};

struct JavaFile {
  std::string path;  // relative to the scanned directory
  std::string package;
  std::vector<std::string> imports;  // "org.springframework.transaction.annotation.Transactional"
  std::vector<TypeDecl> types;       // nested types included, flattened
  std::vector<int> error_lines;      // lines of syntax errors (the rest of the file is read)
};

// True when this build has the Java grammar (tree-sitter and tree-sitter-java).
bool java_grammar_available();

// Parses `text` (the file's bytes) into its model. Never throws for bad
// Java; without the grammar returns an empty model.
JavaFile parse_java(std::string_view text, const std::string& path);

// Helpers the analysis shares.
bool has_annotation(const std::vector<Annotation>& as, std::string_view name);
const Annotation* find_annotation(const std::vector<Annotation>& as, std::string_view name);

}  // namespace lockbench::lint_code
