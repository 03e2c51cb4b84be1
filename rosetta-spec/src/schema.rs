//! A small walker over an OpenAPI 3.0 document held as a `serde_json::Value`: `$ref` resolution,
//! component schema listings, endpoint request/response names, and (in [`validate`]) an instance
//! validator for the subset of JSON Schema the Rosetta specs use.

use std::fmt;

use serde_json::Value;

mod validate;

pub use validate::{validate, validate_against};

/// Prefix of references to component schemas.
pub const SCHEMA_REF_PREFIX: &str = "#/components/schemas/";

/// Resolves a local reference (`#/a/b`, JSON-pointer escapes allowed) within `doc`.
pub fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    doc.pointer(reference.strip_prefix('#')?)
}

/// The component schema called `name`.
pub fn component<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc.get("components")?.get("schemas")?.get(name)
}

/// A component schema, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaInfo {
    pub name: String,
    /// The declared `type` (`object`, `string`, `integer`, ...), if any.
    pub ty: Option<String>,
    pub required: Vec<String>,
    /// Declared properties, in document order.
    pub properties: Vec<PropertyInfo>,
    /// `enum` values of a string schema, in document order.
    pub enum_values: Vec<String>,
}

impl SchemaInfo {
    pub fn property(&self, name: &str) -> Option<&PropertyInfo> {
        self.properties.iter().find(|p| p.name == name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PropertyInfo {
    pub name: String,
    pub ty: TypeRef,
    pub required: bool,
}

/// The type of a property: a primitive, a reference to a component schema, or an array of either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeRef {
    Primitive(String),
    Ref(String),
    Array(Box<TypeRef>),
    /// No `type` and no `$ref` (any value).
    Any,
}

impl TypeRef {
    fn of(schema: &Value) -> TypeRef {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return TypeRef::Ref(r.strip_prefix(SCHEMA_REF_PREFIX).unwrap_or(r).to_owned());
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => TypeRef::Array(Box::new(schema.get("items").map_or(TypeRef::Any, TypeRef::of))),
            Some(t) => TypeRef::Primitive(t.to_owned()),
            None => TypeRef::Any,
        }
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::Primitive(t) | TypeRef::Ref(t) => f.write_str(t),
            TypeRef::Array(item) => write!(f, "array<{item}>"),
            TypeRef::Any => f.write_str("any"),
        }
    }
}

/// Summarises the component schema `name`, if the document has it.
pub fn schema_info(doc: &Value, name: &str) -> Option<SchemaInfo> {
    component(doc, name).map(|s| summarise(name, s))
}

/// Every component schema, in document order.
pub fn component_schemas(doc: &Value) -> Vec<SchemaInfo> {
    let Some(schemas) = doc.pointer("/components/schemas").and_then(Value::as_object) else {
        return Vec::new();
    };
    schemas.iter().map(|(name, s)| summarise(name, s)).collect()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn summarise(name: &str, schema: &Value) -> SchemaInfo {
    let required = strings(schema.get("required"));
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(p, s)| PropertyInfo {
                    name: p.clone(),
                    ty: TypeRef::of(s),
                    required: required.contains(p),
                })
                .collect()
        })
        .unwrap_or_default();
    SchemaInfo {
        name: name.to_owned(),
        ty: schema.get("type").and_then(Value::as_str).map(str::to_owned),
        enum_values: strings(schema.get("enum")),
        required,
        properties,
    }
}

/// One `POST` endpoint and the component schemas of its JSON bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub path: String,
    pub request: Option<String>,
    /// Schema of the `200` response.
    pub response: Option<String>,
    /// Schema of the `500` response (the wire `Error`).
    pub error: Option<String>,
}

/// Every `POST` endpoint of the document, in document order.
pub fn endpoints(doc: &Value) -> Vec<Endpoint> {
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Vec::new();
    };
    let body_schema = |v: Option<&Value>| match TypeRef::of(v?.pointer("/content/application~1json/schema")?)
    {
        TypeRef::Ref(name) => Some(name),
        _ => None,
    };
    paths
        .iter()
        .filter_map(|(path, item)| {
            let post = item.get("post")?;
            let responses = post.get("responses");
            Some(Endpoint {
                path: path.clone(),
                request: body_schema(post.get("requestBody")),
                response: body_schema(responses.and_then(|r| r.get("200"))),
                error: body_schema(responses.and_then(|r| r.get("500"))),
            })
        })
        .collect()
}

/// The endpoint at `path`, if the document declares it.
pub fn endpoint(doc: &Value, path: &str) -> Option<Endpoint> {
    endpoints(doc).into_iter().find(|e| e.path == path)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn doc() -> Value {
        json!({
            "paths": {
                "/thing": {"post": {
                    "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Req"}}}},
                    "responses": {
                        "200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}},
                        "500": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
                    }
                }}
            },
            "components": {"schemas": {
                "Thing": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {
                        "id": {"type": "integer"},
                        "kind": {"$ref": "#/components/schemas/Kind"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "meta": {}
                    }
                },
                "Kind": {"type": "string", "enum": ["a", "b"]}
            }}
        })
    }

    #[test]
    fn resolves_refs_and_pointer_escapes() {
        let d = doc();
        assert_eq!(resolve(&d, "#/components/schemas/Kind/enum/1"), Some(&json!("b")));
        assert!(resolve(&d, "#/paths/~1thing/post").is_some());
        assert_eq!(resolve(&d, "components/schemas/Kind"), None, "only local refs");
        assert_eq!(resolve(&d, "#/components/schemas/Nope"), None);
    }

    #[test]
    fn summarises_component_schemas() {
        let d = doc();
        let all = component_schemas(&d);
        assert_eq!(all.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Thing", "Kind"]);
        let thing = &all[0];
        assert_eq!(thing.ty.as_deref(), Some("object"));
        assert_eq!(thing.required, ["id"]);
        let types: Vec<String> = thing.properties.iter().map(|p| format!("{}:{}", p.name, p.ty)).collect();
        assert_eq!(types, ["id:integer", "kind:Kind", "tags:array<string>", "meta:any"]);
        assert!(thing.property("id").unwrap().required);
        assert!(!thing.property("kind").unwrap().required);
        assert_eq!(schema_info(&d, "Kind").unwrap().enum_values, ["a", "b"]);
        assert_eq!(schema_info(&d, "Nope"), None);
    }

    #[test]
    fn lists_endpoints_with_body_schemas() {
        let e = endpoint(&doc(), "/thing").unwrap();
        assert_eq!(e.request.as_deref(), Some("Req"));
        assert_eq!(e.response.as_deref(), Some("Thing"));
        assert_eq!(e.error.as_deref(), Some("Error"));
        assert_eq!(endpoint(&doc(), "/other"), None);
    }
}
