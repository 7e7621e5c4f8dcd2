; C++: as C, plus classes (their functions are methods), Foo::bar defined
; outside Foo, templates (wrapped by the row), bases, new.
(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name) (destructor_name)] @name)
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name))
  body: (_) @body) @def.function
(function_definition
  declarator: (reference_declarator (function_declarator
    declarator: [(identifier) (field_identifier) (qualified_identifier) (operator_name)] @name))
  body: (_) @body) @def.function
(class_specifier name: (_) @name body: (_) @body) @def.class
(struct_specifier name: (_) @name body: (_) @body) @def.class
(union_specifier name: (_) @name body: (_) @body) @def.class
(enum_specifier name: (_) @name body: (_) @body) @def.type
(type_definition declarator: (type_identifier) @name) @def.type
(alias_declaration name: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro

(call_expression function: (_) @ref.call arguments: (_) @ref.args)
(new_expression type: (_) @ref.call arguments: (argument_list) @ref.args)
(new_expression type: (_) @ref.call !arguments)
; a variable constructed with arguments (`Lexer lexer(input);`): a call of
; its class, which reaches the constructor (IdxLang.constructor_calls)
(declaration type: [(type_identifier) (qualified_identifier)] @ref.call
  declarator: (init_declarator value: (argument_list) @ref.args))
(compound_statement (declaration type: [(type_identifier) (qualified_identifier)] @ref.call
  declarator: (function_declarator declarator: (identifier) parameters: (parameter_list) @ref.args)))
; a variable of a class type in a body, constructed with no arguments
; (`FileMetaData meta;`: @ref.args is the declarator, which holds none) or
; from a braced list (`Foo f{a, b};`), and a temporary from one (`Foo{a}`):
; a construction (IDX_REF_CONSTRUCT), which reaches a constructor only
(compound_statement (declaration type: [(type_identifier) (qualified_identifier)] @ref.construct
  declarator: (identifier) @ref.args))
(compound_statement (declaration type: [(type_identifier) (qualified_identifier)] @ref.construct
  declarator: (init_declarator value: (initializer_list) @ref.args)))
(compound_literal_expression type: [(type_identifier) (qualified_identifier)] @ref.construct
  value: (initializer_list) @ref.args)
; a field or a base built in a constructor's initializer list (`result_()`,
; `Base(x)`): its type's constructor
(field_initializer [(field_identifier) (qualified_identifier)] @ref.construct
  (argument_list) @ref.args)
; an object the standard library's factories construct (`std::make_unique<Iter>(a)`):
; a call of its class with the factory's arguments
(call_expression
  function: (qualified_identifier name: (template_function name: (identifier) @_factory
    arguments: (template_argument_list . (type_descriptor type: [(type_identifier) (qualified_identifier)] @ref.construct) .)))
  arguments: (argument_list) @ref.args
  (#eq? @_factory "make_unique"))
(call_expression
  function: (qualified_identifier name: (template_function name: (identifier) @_factory
    arguments: (template_argument_list . (type_descriptor type: [(type_identifier) (qualified_identifier)] @ref.construct) .)))
  arguments: (argument_list) @ref.args
  (#eq? @_factory "make_shared"))
(base_class_clause (type_identifier) @ref.inherit)
(base_class_clause (qualified_identifier) @ref.inherit)
(base_class_clause (template_type name: (_) @ref.inherit))
(type_identifier) @ref.type
(preproc_include) @import
(preproc_function_def value: (preproc_arg) @ref.expand)
; preprocessor facts: conditional branches and macros defined (chunk_ts_pp.c)
(preproc_if) @pp.if
(preproc_ifdef) @pp.if
(preproc_def) @pp.define
(preproc_function_def) @pp.define

; receivers of a known type (chunk_ts_types.c): parameters, locals, fields
; (a call on a member inside a method: `mutex_.Lock()` is through the
; class's field, as `this->mutex_`), results
; (a scalar type, `char** argv`: the type of a call's argument that names
; it, never a receiver's)
(parameter_declaration type: [(type_identifier) (qualified_identifier) (primitive_type)] @var.type
  declarator: [(identifier) @var.name
               (pointer_declarator declarator: (identifier) @var.address)
               (pointer_declarator declarator: (pointer_declarator declarator: (identifier) @var.address))
               (reference_declarator (identifier) @var.name)])
(optional_parameter_declaration type: [(type_identifier) (qualified_identifier)] @var.type
  declarator: [(identifier) @var.name
               (pointer_declarator declarator: (identifier) @var.address)
               (reference_declarator (identifier) @var.name)])
(declaration type: [(type_identifier) (qualified_identifier) (primitive_type)] @var.type
  declarator: [(identifier) @var.name
               (init_declarator declarator: (identifier) @var.name)
               (pointer_declarator declarator: (identifier) @var.address)
               (init_declarator declarator: (pointer_declarator declarator: (identifier) @var.address))
               (reference_declarator (identifier) @var.name)
               (init_declarator declarator: (reference_declarator (identifier) @var.name))])
; a variable constructed from names (`Parser p(state_, &file);`), which the
; grammar reads as a function's declaration: in a body, a variable
(compound_statement (declaration type: [(type_identifier) (qualified_identifier)] @var.type
  declarator: (function_declarator declarator: (identifier) @var.name)))
(field_declaration type: [(type_identifier) (qualified_identifier)] @field.type
  declarator: [(field_identifier) @field.name
               (pointer_declarator declarator: (field_identifier) @field.name)
               (reference_declarator (field_identifier) @field.name)])
; a type alias of a class (`using TestCase = TestSuite;`, `typedef Foo Bar;`):
; the class it names, as a function's result is (a fact of the alias)
(alias_declaration type: (type_descriptor type: [(type_identifier) (qualified_identifier)] @result.type))
(type_definition type: [(type_identifier) (qualified_identifier)] @result.type
  declarator: (type_identifier))
(function_definition type: [(type_identifier) (qualified_identifier)] @result.type
  declarator: [(function_declarator) (pointer_declarator (function_declarator))
               (reference_declarator (function_declarator))])

; an operator applied to a name (`a == b`, `s = f()`, `x[i]`, `*it`, `++it`): a
; call of the operator its type declares, where the name's type is known and
; holds no address (a variable above is @var.address), else none (chunk_ts.c)
(binary_expression left: (identifier) @ref.operand operator: _ @ref.operator)
(assignment_expression left: (identifier) @ref.operand operator: _ @ref.operator)
(subscript_expression argument: (identifier) @ref.operand indices: (_) @ref.operator)
(pointer_expression operator: "*" @ref.operator argument: (identifier) @ref.operand)
(update_expression operator: _ @ref.operator argument: (identifier) @ref.operand)
(update_expression argument: (identifier) @ref.operand operator: _ @ref.operator)

; a definition a macro writes (`TEST_F(Suite, Name) {…}`: no type, the
; macro's arguments read as parameters) is a use of that macro: its body's
; calls are the definition's (IDX_REF_WRITER; a constructor, written alike,
; reaches no macro)
(function_definition !type
  declarator: (function_declarator declarator: (identifier) @ref.writer))
