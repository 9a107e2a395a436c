//! The event union's OpenAPI schema: a `oneOf` with a discriminator on `event`, which every
//! event carries (see [`super::Event`]). The three envelope events are described as they are
//! sent: the envelope's own schema with `event` added (a `Heartbeat` or `ToolResponse`) or
//! narrowed to the names the engine sends (an `EventMessage`). They are copies rather than an
//! `allOf` of the envelope and `event`, because the envelopes admit no other property
//! (`additionalProperties: false`), so such an `allOf` would match nothing.

use std::borrow::Cow;

use jig_model::envelope::{EventMessage, Heartbeat, ToolResponse};
use utoipa::openapi::schema::{Discriminator, OneOfBuilder, Schema};
use utoipa::openapi::{ObjectBuilder, Ref, RefOr, Type};
use utoipa::{PartialSchema, ToSchema};

use super::{ApprovalAsk, ApprovalEvent, Event, RegistryEvent, RunbookEvent};

/// Each event's name in `event`, and the component that describes it, in the order the enum
/// declares them (the union's members are these components, each once).
const MAPPING: [(&str, &str); 10] = [
    ("TaskProgress", "MessageEvent"),
    ("OutputChunk", "MessageEvent"),
    ("RunStateChanged", "MessageEvent"),
    ("Heartbeat", "HeartbeatEvent"),
    ("RegistryReloaded", "RegistryReloaded"),
    ("RegistryRejected", "RegistryRejected"),
    ("ToolResponse", "ResponseEvent"),
    ("ApprovalRequested", "ApprovalAsk"),
    ("ApprovalDecided", "ApprovalEvent"),
    ("RunbookRunChanged", "RunbookEvent"),
];

/// The union's members: the components of [`MAPPING`], each once, in its order.
fn members() -> Vec<&'static str> {
    let mut members: Vec<&'static str> = Vec::new();
    for (_, component) in MAPPING {
        if !members.contains(&component) {
            members.push(component);
        }
    }
    members
}

/// The names a component carries in `event`.
fn names_of(component: &str) -> Vec<&'static str> {
    MAPPING.iter().filter(|(_, c)| *c == component).map(|(name, _)| *name).collect()
}

impl PartialSchema for Event {
    fn schema() -> RefOr<Schema> {
        let mut discriminator = Discriminator::new("event");
        for (name, component) in MAPPING {
            discriminator.mapping.insert(name.to_owned(), reference(component));
        }
        let union = members()
            .into_iter()
            .fold(OneOfBuilder::new(), |union, member| union.item(Ref::from_schema_name(member)));
        union
            .description(Some("Something the event stream carries, named by its `event`."))
            .discriminator(Some(discriminator))
            .into()
    }
}

impl ToSchema for Event {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Event")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("MessageEvent".to_owned(), message()));
        schemas.push(("HeartbeatEvent".to_owned(), named::<Heartbeat>("Heartbeat")));
        schemas.push(("ResponseEvent".to_owned(), named::<ToolResponse>("ToolResponse")));
        schemas.extend(registry_members());
        for (name, schema) in [
            (ApprovalAsk::name(), ApprovalAsk::schema()),
            (ApprovalEvent::name(), ApprovalEvent::schema()),
            (RunbookEvent::name(), RunbookEvent::schema()),
        ] {
            schemas.push((name.into_owned(), schema));
        }
        <EventMessage as ToSchema>::schemas(schemas);
        <Heartbeat as ToSchema>::schemas(schemas);
        <ToolResponse as ToSchema>::schemas(schemas);
        <RegistryEvent as ToSchema>::schemas(schemas);
        <ApprovalAsk as ToSchema>::schemas(schemas);
        <ApprovalEvent as ToSchema>::schemas(schemas);
        <RunbookEvent as ToSchema>::schemas(schemas);
    }
}

/// `RegistryEvent`'s two variants, each its own component named by its `event`: a
/// discriminator maps a name to an object, not to another union.
fn registry_members() -> Vec<(String, RefOr<Schema>)> {
    let RefOr::T(Schema::OneOf(union)) = RegistryEvent::schema() else {
        return vec![(RegistryEvent::name().into_owned(), RegistryEvent::schema())];
    };
    let name_of = |variant: &RefOr<Schema>| {
        let RefOr::T(Schema::Object(object)) = variant else { return None };
        let RefOr::T(Schema::Object(event)) = object.properties.get("event")? else { return None };
        event.enum_values.as_ref()?.first()?.as_str().map(str::to_owned)
    };
    union.items.into_iter().filter_map(|variant| Some((name_of(&variant)?, variant))).collect()
}

fn reference(component: &str) -> String {
    format!("#/components/schemas/{component}")
}

/// `T`'s object schema with `event` added, always `name`.
fn named<T: PartialSchema>(name: &str) -> RefOr<Schema> {
    with_event(T::schema(), &[name], &format!("Always `\"{name}\"` on the event stream."))
}

/// `EventMessage` with `event` narrowed to the names the stream carries.
fn message() -> RefOr<Schema> {
    with_event(EventMessage::schema(), &names_of("MessageEvent"), "What happened to the request.")
}

fn with_event(schema: RefOr<Schema>, names: &[&str], description: &str) -> RefOr<Schema> {
    let RefOr::T(Schema::Object(mut object)) = schema else {
        // The envelopes are plain objects; anything else is described as it is.
        return schema;
    };
    let event = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names.iter().copied()))
        .description(Some(description))
        .build();
    object.properties.insert("event".to_owned(), event.into());
    if !object.required.iter().any(|field| field == "event") {
        object.required.push("event".to_owned());
    }
    RefOr::T(Schema::Object(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union is eight kinds of event, an `EventMessage` under its three names.
    #[test]
    fn the_discriminator_maps_every_name_to_a_member() {
        assert_eq!(members().len(), 8);
        assert_eq!(names_of("MessageEvent"), ["TaskProgress", "OutputChunk", "RunStateChanged"]);
        assert_eq!(names_of("HeartbeatEvent"), ["Heartbeat"]);
    }

    /// Every member the mapping names is a component the union brings, and an object.
    #[test]
    fn every_member_is_an_object_the_union_brings() {
        let mut schemas = Vec::new();
        <Event as ToSchema>::schemas(&mut schemas);
        for member in members() {
            let schema = schemas.iter().find(|(name, _)| name == member).map(|(_, s)| s);
            assert!(
                matches!(schema, Some(RefOr::T(Schema::Object(_)))),
                "{member} is not an object the union brings"
            );
        }
    }
}
