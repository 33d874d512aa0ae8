//! Enums whose values each have one fixed name, written once in the enum's `strum` attributes and
//! used everywhere the value leaves the program: JSON, storage and the API document.

pub use strum::{IntoStaticStr, VariantNames};

/// Declares a plain enum whose names are given by its `#[strum(...)]` attributes, with the name of
/// each value, its parsing, and serde by those names. An unknown name fails as serde's own enums
/// do: "unknown variant `x`, expected one of ...".
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident { $($(#[$variant_meta:meta])* $variant:ident),+ $(,)? }
    ) => {
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord,
            strum::IntoStaticStr, strum::EnumString, strum::VariantNames,
        )]
        $(#[$meta])*
        $vis enum $ty { $($(#[$variant_meta])* $variant),+ }

        impl $ty {
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            pub fn parse(name: &str) -> Option<Self> {
                name.parse().ok()
            }

            /// Every value, in declaration order.
            pub fn names() -> &'static [&'static str] {
                <Self as $crate::wire_name::VariantNames>::VARIANTS
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visitor;
                impl ::serde::de::Visitor<'_> for Visitor {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "one of {}", <$ty>::names().join(", "))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, name: &str) -> Result<$ty, E> {
                        <$ty>::parse(name).ok_or_else(|| E::unknown_variant(name, <$ty>::names()))
                    }
                }
                deserializer.deserialize_str(Visitor)
            }
        }
    };
}
