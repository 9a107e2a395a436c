//! Free-form objects, said outright in the OpenAPI document.
//!
//! A tool's arguments, a runbook's inputs or a policy's configuration are any JSON object, and
//! the Rust types give them as `{"type": "object"}`. OpenAPI means "any object" by that, but
//! client generators read it as an object with no properties (openapi-typescript writes
//! `Record<string, never>`), so the UI cast everything it sent. With `additionalProperties:
//! true` they say what the API means: `{ [key: string]: unknown }`.

use utoipa::openapi::schema::{AdditionalProperties, ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::{OpenApi, RefOr};

/// The document with every object schema that declares no properties marked as taking any.
/// The operations' bodies refer to the components, so the components are all there is to mark.
pub(crate) fn mark(mut doc: OpenApi) -> OpenApi {
    if let Some(components) = doc.components.as_mut() {
        components.schemas.values_mut().for_each(walk);
    }
    doc
}

fn walk(schema: &mut RefOr<Schema>) {
    let RefOr::T(schema) = schema else { return };
    match schema {
        Schema::Object(object) => {
            let is_object = match &object.schema_type {
                SchemaType::Type(t) => *t == Type::Object,
                SchemaType::Array(types) => types.contains(&Type::Object),
                SchemaType::AnyValue => false,
            };
            if is_object && object.properties.is_empty() && object.additional_properties.is_none() {
                object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(true)));
            }
            object.properties.values_mut().for_each(walk);
            if let Some(extra) = object.additional_properties.as_deref_mut()
                && let AdditionalProperties::RefOr(inner) = extra
            {
                walk(inner);
            }
        }
        Schema::Array(array) => {
            if let ArrayItems::RefOrSchema(items) = &mut array.items {
                walk(items);
            }
        }
        Schema::OneOf(one) => one.items.iter_mut().for_each(walk),
        Schema::AllOf(all) => all.items.iter_mut().for_each(walk),
        Schema::AnyOf(any) => any.items.iter_mut().for_each(walk),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::schema::ObjectBuilder;

    fn free_form(schema: &RefOr<Schema>) -> Option<bool> {
        match schema {
            RefOr::T(Schema::Object(object)) => match object.additional_properties.as_deref() {
                Some(AdditionalProperties::FreeForm(any)) => Some(*any),
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn only_objects_without_properties_take_any() {
        let any = ObjectBuilder::new().schema_type(Type::Object).build();
        let maybe = ObjectBuilder::new()
            .schema_type(SchemaType::Array(vec![Type::Object, Type::Null]))
            .build();
        let text = ObjectBuilder::new().schema_type(Type::String).build();
        let mut outer = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("args", any)
            .property("maybe", maybe)
            .property("text", text)
            .build();
        outer.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
        let mut schema = RefOr::T(Schema::Object(outer));
        walk(&mut schema);
        let RefOr::T(Schema::Object(outer)) = &schema else { panic!("an object") };
        assert_eq!(free_form(&schema), Some(false), "a closed object stays closed");
        assert_eq!(free_form(&outer.properties["args"]), Some(true));
        assert_eq!(free_form(&outer.properties["maybe"]), Some(true));
        assert_eq!(free_form(&outer.properties["text"]), None);
    }
}
