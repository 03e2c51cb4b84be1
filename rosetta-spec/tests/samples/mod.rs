//! Samples built from the Rust models, and the table that maps each spec schema name to them.
//!
//! Every object model gets a minimal sample (required fields only) and a maximal one (every
//! optional field filled). The table's names come from `stringify!` on the Rust types, so an
//! entry also proves the type carries the schema's exact name.

mod endpoints;
mod indexer;
mod objects;

use rosetta_spec::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

/// Minimal and maximal values of a model.
pub trait Sample: Sized {
    fn minimal() -> Self;
    fn maximal() -> Self;
}

pub enum Shape {
    Object {
        min: Value,
        max: Value,
    },
    /// Every variant, serialized in declaration order.
    Enum(Vec<Value>),
    Primitive(Value),
}

pub struct Entry {
    pub name: &'static str,
    pub shape: Shape,
    /// JSON → model → JSON.
    pub decode: fn(&Value) -> Result<Value, String>,
}

fn decode<T: Serialize + DeserializeOwned>(v: &Value) -> Result<Value, String> {
    let model: T = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(model).map_err(|e| e.to_string())
}

fn to_json<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).expect("models always serialize")
}

fn object<T: Sample + Serialize + DeserializeOwned>(name: &'static str) -> Entry {
    let shape = Shape::Object { min: to_json(&T::minimal()), max: to_json(&T::maximal()) };
    Entry { name, shape, decode: decode::<T> }
}

fn enumeration<T: Serialize + DeserializeOwned>(name: &'static str, all: &[T]) -> Entry {
    Entry { name, shape: Shape::Enum(all.iter().map(to_json).collect()), decode: decode::<T> }
}

fn primitive<T: Serialize + DeserializeOwned>(name: &'static str, sample: T) -> Entry {
    Entry { name, shape: Shape::Primitive(to_json(&sample)), decode: decode::<T> }
}

macro_rules! objects {
    ($($t:ident),+ $(,)?) => { vec![$(object::<$t>(stringify!($t)),)+] };
}

macro_rules! enums {
    ($($t:ident),+ $(,)?) => { vec![$(enumeration::<$t>(stringify!($t), $t::ALL),)+] };
}

/// Models of the component schemas of `api.json` (Rosetta 1.4.6).
pub fn v1_4_6() -> Vec<Entry> {
    let mut table = objects![
        NetworkIdentifier,
        SubNetworkIdentifier,
        BlockIdentifier,
        PartialBlockIdentifier,
        TransactionIdentifier,
        OperationIdentifier,
        AccountIdentifier,
        SubAccountIdentifier,
        Block,
        Transaction,
        Operation,
        Amount,
        Currency,
        SyncStatus,
        Peer,
        Version,
        Allow,
        OperationStatus,
        PublicKey,
        SigningPayload,
        Signature,
        CoinIdentifier,
        CoinChange,
        Coin,
        BalanceExemption,
        AccountBalanceRequest,
        AccountBalanceResponse,
        BlockRequest,
        BlockResponse,
        BlockTransactionRequest,
        BlockTransactionResponse,
        MempoolResponse,
        MempoolTransactionRequest,
        MempoolTransactionResponse,
        MetadataRequest,
        NetworkListResponse,
        NetworkRequest,
        NetworkStatusResponse,
        NetworkOptionsResponse,
        ConstructionMetadataRequest,
        ConstructionMetadataResponse,
        ConstructionDeriveRequest,
        ConstructionDeriveResponse,
        ConstructionPreprocessRequest,
        ConstructionPreprocessResponse,
        ConstructionPayloadsRequest,
        ConstructionPayloadsResponse,
        ConstructionCombineRequest,
        ConstructionCombineResponse,
        ConstructionParseRequest,
        ConstructionParseResponse,
        ConstructionHashRequest,
        ConstructionSubmitRequest,
        TransactionIdentifierResponse,
        CallRequest,
        CallResponse,
        Error,
    ];
    table.extend(enums![CurveType, SignatureType, CoinAction, ExemptionType]);
    table.push(primitive::<Timestamp>("Timestamp", 1_600_000_000_000));
    table
}

/// Models of the indexer schemas that `api-v1.4.7.json` adds.
pub fn v1_4_7_indexer() -> Vec<Entry> {
    let mut table = objects![
        EventsBlocksRequest,
        EventsBlocksResponse,
        BlockEvent,
        SearchTransactionsRequest,
        SearchTransactionsResponse,
        BlockTransaction,
        AccountCoinsRequest,
        AccountCoinsResponse,
    ];
    table.extend(enums![BlockEventType, Operator]);
    table
}

/// A small free-form object with nested values.
fn meta() -> Metadata {
    serde_json::from_value(json!({"memo": "hello", "nested": {"list": [1, 2, 3], "flag": true}})).unwrap()
}

fn string(s: &str) -> String {
    s.to_owned()
}
