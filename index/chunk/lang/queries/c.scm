; C: definitions, calls, type references and #include "..."
(function_definition
  declarator: (function_declarator declarator: (identifier) @name)
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))
  body: (_) @body) @def.function
(function_definition
  declarator: (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name)))
  body: (_) @body) @def.function
; a function a macro defines by its name alone (`DEFINE_IDTENTRY(exc_int3) {…}`,
; read as `T (name) {…}`; the row's mask makes `M(name, args…) {…}` `M name(args…)`)
(translation_unit (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function)
(translation_unit (preproc_if (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function))
(translation_unit (preproc_ifdef (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function))
(translation_unit (preproc_if (preproc_else (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function)))
(translation_unit (preproc_ifdef (preproc_else (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function)))
(translation_unit (preproc_if (preproc_elif (function_definition
  declarator: (parenthesized_declarator (identifier) @name)
  body: (_) @body) @def.function)))
(struct_specifier name: (type_identifier) @name body: (_) @body) @def.type
(union_specifier name: (type_identifier) @name body: (_) @body) @def.type
(enum_specifier name: (type_identifier) @name body: (_) @body) @def.type
(type_definition declarator: (type_identifier) @name) @def.type
(preproc_function_def name: (identifier) @name) @def.macro
; file-level tables: a declaration initialised with a braced list (a
; macro that names it, `DEFINE_SCHED_CLASS(fair) = {…}`, read as `T (fair)`),
; at the top or in a conditional branch there (`#ifdef CONFIG_PM`)
(translation_unit (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant)
(translation_unit (preproc_if (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant))
(translation_unit (preproc_ifdef (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant))
(translation_unit (preproc_if (preproc_else (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant)))
(translation_unit (preproc_ifdef (preproc_else (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant)))
(translation_unit (preproc_if (preproc_elif (declaration declarator: (init_declarator declarator: [
  (identifier) @name
  (parenthesized_declarator (identifier) @name)
  (array_declarator declarator: (identifier) @name)
  (array_declarator declarator: (array_declarator declarator: (identifier) @name))
  (pointer_declarator declarator: (identifier) @name)
  (pointer_declarator declarator: (array_declarator declarator: (identifier) @name))]
  value: (initializer_list))) @def.constant)))

(call_expression function: (_) @ref.call)
; a function named as a value: an argument, a table entry, an initial or
; assigned value, an address taken (a reference, not a call)
(argument_list (identifier) @ref.value)
(initializer_list (identifier) @ref.value)
(initializer_pair value: (identifier) @ref.value)
(init_declarator value: (identifier) @ref.value)
(assignment_expression right: (identifier) @ref.value)
(pointer_expression argument: (identifier) @ref.value)
; a function stored in a field by a designated initializer (`.open = f`,
; `.read = &f`): a call through the field reaches it (REF_STORE)
(initializer_pair designator: (field_designator (field_identifier) @store.field)
  value: (identifier) @store.value)
(initializer_pair designator: (field_designator (field_identifier) @store.field)
  value: (pointer_expression argument: (identifier) @store.value))
; variables declared: a value that names one is not a function
(parameter_declaration declarator: (identifier) @local)
(parameter_declaration declarator: (pointer_declarator declarator: (identifier) @local))
(declaration declarator: (identifier) @local)
(declaration declarator: (pointer_declarator declarator: (identifier) @local))
(init_declarator declarator: (identifier) @local)
(init_declarator declarator: (pointer_declarator declarator: (identifier) @local))
(array_declarator declarator: (identifier) @local)
(type_identifier) @ref.type
(preproc_include) @import
; a function-like macro's body: its calls are its users' (REF_EXPAND)
(preproc_function_def value: (preproc_arg) @ref.expand)
; preprocessor facts: conditional branches and macros defined (chunk_ts_pp.c)
(preproc_if) @pp.if
(preproc_ifdef) @pp.if
(preproc_def) @pp.define
(preproc_function_def) @pp.define
