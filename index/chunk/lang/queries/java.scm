; Java: types are containers (methods, constructors, nested types).
(class_declaration name: (identifier) @name body: (_) @body) @def.class
(interface_declaration name: (identifier) @name body: (_) @body) @def.class
(enum_declaration name: (identifier) @name body: (_) @body) @def.class
(record_declaration name: (identifier) @name body: (_) @body) @def.class
(annotation_type_declaration name: (identifier) @name body: (_) @body) @def.class
; an enum constant with a body is a class of its own (its methods are its)
(enum_constant name: (identifier) @name body: (class_body) @body) @def.class
(method_declaration name: (identifier) @name body: (_) @body) @def.function
(method_declaration name: (identifier) @name !body) @def.function
(constructor_declaration name: (identifier) @name body: (_) @body) @def.function

(method_invocation object: (_) @ref.from name: (identifier) @ref.call)
(method_invocation !object name: (identifier) @ref.call)
(object_creation_expression type: (_) @ref.call)
(superclass (_) @ref.inherit)
(super_interfaces (type_list (_) @ref.inherit))
(extends_interfaces (type_list (_) @ref.inherit))
(type_identifier) @ref.type
(import_declaration) @import
(package_declaration (_) @package)

; receivers of a known type (chunk_ts_types.c): parameters, locals, fields
; (`field.m()` in a method is through the class's field), results
(formal_parameter type: [(type_identifier) (scoped_type_identifier)
                         (generic_type [(type_identifier) (scoped_type_identifier)])] @var.type
  name: (identifier) @var.name)
(local_variable_declaration type: [(type_identifier) (scoped_type_identifier)
                                   (generic_type [(type_identifier) (scoped_type_identifier)])] @var.type
  declarator: (variable_declarator name: (identifier) @var.name))
(field_declaration type: [(type_identifier) (scoped_type_identifier)
                          (generic_type [(type_identifier) (scoped_type_identifier)])] @field.type
  declarator: (variable_declarator name: (identifier) @field.name))
(method_declaration type: [(type_identifier) (scoped_type_identifier)
                           (generic_type [(type_identifier) (scoped_type_identifier)])] @result.type)
