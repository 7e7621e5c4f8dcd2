; Go: functions, methods (attached to their receiver's type), types.
(function_declaration name: (identifier) @name body: (_) @body) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @receiver
    (pointer_type (type_identifier) @receiver)
    (generic_type type: (type_identifier) @receiver)
    (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name
  body: (_) @body) @def.method
(type_declaration (type_spec name: (type_identifier) @name type: (_) @body)) @def.type
; an interface holds its methods' declarations; a type implements it by
; defining them (graph_types.c); an interface it embeds is a base
(type_declaration (type_spec name: (type_identifier) @name
  type: (interface_type) @body @interface)) @def.class
(type_spec type: (interface_type (method_elem name: (field_identifier) @name) @def.method))
(type_spec type: (interface_type (type_elem . [(type_identifier) (qualified_type)] @ref.inherit .)))
; package-level variables and constants with a value (tables, maps)
(source_file (var_declaration (var_spec name: (identifier) @name value: (_)) @def.constant))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name value: (_)) @def.constant)))
(source_file (const_declaration (const_spec name: (identifier) @name value: (_)) @def.constant))

(call_expression function: (_) @ref.call)
; a composite literal `T{…}` builds a value: a use of its type (below), no call
(type_identifier) @ref.type
(import_spec) @import
(package_clause (package_identifier) @package)

; receivers of a known type (chunk_ts_types.c): parameters and receivers,
; `var x T`, `x := T{…}`, `x := &T{…}`, `x := NewT(…)` (what NewT gives),
; `x := make(T, n)`, `x := new(T)`,
; `x := v.(*T)`,
; struct fields, a function's (first) result
(parameter_declaration name: (identifier) @var.name
  type: [(type_identifier) (qualified_type)
         (pointer_type [(type_identifier) (qualified_type)])] @var.type)
(var_spec name: (identifier) @var.top
  type: [(type_identifier) (qualified_type)
         (pointer_type [(type_identifier) (qualified_type)])] @var.type)
(short_var_declaration left: (expression_list . (identifier) @var.name)
  right: (expression_list . [(composite_literal type: [(type_identifier) (qualified_type)] @var.type)
                             (unary_expression operand: (composite_literal
                               type: [(type_identifier) (qualified_type)] @var.type))
                             (call_expression function: [(identifier) (selector_expression)] @var.type)
                             (type_assertion_expression type: [(type_identifier) (qualified_type)
                               (pointer_type [(type_identifier) (qualified_type)])] @var.type)])
  (#not-eq? @var.type "make") (#not-eq? @var.type "new"))
; `x := make(T, n)`, `x := new(T)`: a T
(short_var_declaration left: (expression_list . (identifier) @var.name)
  right: (expression_list . (call_expression function: (identifier) @_builtin
    arguments: (argument_list . [(type_identifier) (qualified_type)] @var.type)))
  (#eq? @_builtin "make"))
(short_var_declaration left: (expression_list . (identifier) @var.name)
  right: (expression_list . (call_expression function: (identifier) @_builtin
    arguments: (argument_list . [(type_identifier) (qualified_type)] @var.type)))
  (#eq? @_builtin "new"))
; `var X = T{…}`, `var X = &T{…}`, `var X = NewT(…)` (a type written, `var X
; I = &T{}`, is the variable's) and `var X T`: at the top of a file (module
; code), a variable of the file's scope and a fact of the package
; (package_vars); not rooted at source_file, which a query cursor would carry
; through the whole file
(var_spec name: (identifier) @var.top !type
  value: (expression_list . [(composite_literal type: [(type_identifier) (qualified_type)] @var.type)
                             (unary_expression operand: (composite_literal
                               type: [(type_identifier) (qualified_type)] @var.type))
                             (call_expression function: [(identifier) (selector_expression)] @var.type)])
  (#not-eq? @var.type "make") (#not-eq? @var.type "new"))
; `b := Query`: what the package variable Query holds
(short_var_declaration left: (expression_list . (identifier) @var.name)
  right: (expression_list . (identifier) @var.type .))
(field_declaration name: (field_identifier) @field.name
  type: [(type_identifier) (qualified_type)
         (pointer_type [(type_identifier) (qualified_type)])] @field.type)
(function_declaration result: [(type_identifier) (qualified_type)
                               (pointer_type [(type_identifier) (qualified_type)])] @result.type)
(method_declaration result: [(type_identifier) (qualified_type)
                             (pointer_type [(type_identifier) (qualified_type)])] @result.type)
(function_declaration result: (parameter_list . (parameter_declaration type: [(type_identifier) (qualified_type)
                               (pointer_type [(type_identifier) (qualified_type)])] @result.type)))
(method_declaration result: (parameter_list . (parameter_declaration type: [(type_identifier) (qualified_type)
                             (pointer_type [(type_identifier) (qualified_type)])] @result.type)))
; a call on a value written with its type: `(T{…}).m()`, `T{…}.m()`, `(&T{…}).m()`
(call_expression function: (selector_expression
  operand: [(composite_literal type: [(type_identifier) (qualified_type)] @recv.type)
            (parenthesized_expression [
              (composite_literal type: [(type_identifier) (qualified_type)] @recv.type)
              (unary_expression operand: (composite_literal
                type: [(type_identifier) (qualified_type)] @recv.type))])]
  field: (field_identifier) @recv.call))
; an embedded field (no name) is a base: its methods are the struct's
(field_declaration . [(type_identifier) (qualified_type)
                      (pointer_type [(type_identifier) (qualified_type)])] @ref.inherit)
