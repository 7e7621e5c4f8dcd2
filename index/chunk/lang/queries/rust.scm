; Rust: items; impl blocks are containers named by their type (their
; functions are its methods); a trait impl is an inheritance edge.
(function_item name: (identifier) @name body: (_) @body) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.type
(enum_item name: (type_identifier) @name) @def.type
(union_item name: (type_identifier) @name) @def.type
; a type alias of a module; an impl's associated types (`type Ok = String;`,
; a dozen one-liners in every serde impl) are part of the impl, not definitions
(source_file (type_item name: (type_identifier) @name) @def.type)
(mod_item body: (declaration_list (type_item name: (type_identifier) @name) @def.type))
(trait_item name: (type_identifier) @name body: (_) @body) @def.class
; `impl Trait for &'a mut Deserializer<R>` holds Deserializer's methods
(impl_item type: [(type_identifier) (generic_type) (scoped_type_identifier) (primitive_type)
                  (array_type) (tuple_type) (dynamic_type) (pointer_type) (function_type)
                  (unit_type) (never_type) (abstract_type) (bounded_type)] @name
  body: (_) @body) @def.impl
(impl_item type: (reference_type type: (_) @name) body: (_) @body) @def.impl
(mod_item name: (identifier) @name body: (_) @body) @def.namespace
(macro_definition name: (identifier) @name) @def.macro
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant

(call_expression function: (_) @ref.call)
(macro_invocation macro: (_) @ref.call)
; calls inside a macro's arguments (`tri!(self.parse_whitespace())`,
; `check_recursion! { visitor.visit_seq(SeqAccess::new(self)) }`), which the
; grammar leaves as tokens: a name, or a receiver and a name, before (...).
; The receiver patterns name no parent (`_`, with a bracket among its tokens:
; a token tree, or a `$(...)*` repetition in a macro's body): under
; `token_tree` tree-sitter's analysis of every token sequence the grammar
; allows there took 0.2 s to compile each (0.4 of Rust's 0.43 s)
(_ . ["(" "[" "{"] [(identifier) (self)] @ref.from . "." . (identifier) @ref.call . (token_tree . "("))
(_ . ["(" "[" "{"] (identifier) @ref.from . "::" . (identifier) @ref.call . (token_tree . "("))
(token_tree (identifier) @ref.call . (token_tree . "("))
(struct_expression name: (_) @ref.call)
(impl_item trait: (_) @ref.inherit)
(type_identifier) @ref.type
(use_declaration) @import
(mod_item) @import
; `crate::` and `super::` paths in code bind their first segment (rust.c)
(source_file) @import

; receivers of a known type (chunk_ts_types.c): parameters, `let x: T`,
; `let x = T::new()` (what new gives), fields, results (`-> Self`: the impl's type)
(parameter pattern: (identifier) @var.name
  type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))
         (reference_type type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))])] @var.type)
(let_declaration pattern: (identifier) @var.name
  type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))
         (reference_type type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))])] @var.type)
(let_declaration pattern: (identifier) @var.name
  value: [(call_expression function: [(identifier) (scoped_identifier)] @var.type)
          (struct_expression name: [(type_identifier) (scoped_type_identifier)] @var.type)])
(field_declaration name: (field_identifier) @field.name
  type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))
         (reference_type type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))])] @field.type)
(function_item return_type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))
         (reference_type type: [(type_identifier) (scoped_type_identifier) (generic_type type: (_))])] @result.type)
