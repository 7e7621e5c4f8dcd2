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
; package-level variables and constants with a value (tables, maps)
(source_file (var_declaration (var_spec name: (identifier) @name value: (_)) @def.constant))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name value: (_)) @def.constant)))
(source_file (const_declaration (const_spec name: (identifier) @name value: (_)) @def.constant))

(call_expression function: (_) @ref.call)
(composite_literal type: (type_identifier) @ref.call)
(type_identifier) @ref.type
(import_spec) @import
(package_clause (package_identifier) @package)
