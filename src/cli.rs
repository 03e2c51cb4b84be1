//! Command-line interface: argument parsing and the offline codec commands.

use std::io::Read;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value as Json};
use stacks_codec::clarity::Value;
use stacks_codec::tx::Transaction;
use stacks_codec::{decode_hex, to_hex_prefixed};

#[derive(Debug, Parser)]
#[command(
    name = "stacks-ledger",
    version,
    about = "Rosetta-first integration server for the Stacks blockchain"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decode a serialized transaction (hex, `-` for stdin) and print it as JSON.
    DecodeTx {
        hex: String,
        #[arg(long, value_enum, default_value_t = Format::Api)]
        format: Format,
    },
    /// Decode a serialized Clarity value (hex, `-` for stdin) and print it as JSON.
    DecodeClarity {
        hex: String,
        #[arg(long, value_enum, default_value_t = Format::Api)]
        format: Format,
    },
    /// Generate a deterministic devnet chain as node events (a TSV log, or POSTs to an observer).
    Devnet(stacks_ledger::devnet::DevnetArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// The shape the extended API serves (`/extended/v1/tx/{id}` fields; `{hex, repr, type}`).
    Api,
    /// The reference decoder's full JSON (`decodeTransaction` / `decodeClarityValue`).
    Native,
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let out = match cli.command {
        Command::DecodeTx { hex, format } => decode_tx(&read_arg(hex)?, format)?,
        Command::DecodeClarity { hex, format } => decode_clarity(&read_arg(hex)?, format)?,
        Command::Devnet(args) => return Ok(stacks_ledger::devnet::run(args)?),
    };
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// The argument itself, or standard input when it is `-`.
fn read_arg(arg: String) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg);
    }
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
    Ok(s.trim().to_string())
}

pub fn decode_tx(hex: &str, format: Format) -> anyhow::Result<Json> {
    let bytes = decode_hex(hex.trim())?;
    let tx = Transaction::deserialize(&bytes).context("decoding transaction")?;
    Ok(match format {
        Format::Native => tx.to_decoded_json(),
        Format::Api => {
            let mut fields = serde_json::Map::new();
            fields.insert("tx_id".into(), json!(to_hex_prefixed(&tx.txid())));
            fields.extend(tx.api_tx_fields());
            Json::Object(fields)
        }
    })
}

pub fn decode_clarity(hex: &str, format: Format) -> anyhow::Result<Json> {
    let bytes = decode_hex(hex.trim())?;
    let value = Value::deserialize(&bytes).context("decoding Clarity value")?;
    Ok(match format {
        Format::Native => value.to_decoded_json(),
        Format::Api => json!({
            "hex": to_hex_prefixed(&bytes),
            "repr": value.repr(),
            "type": value.type_name(),
        }),
    })
}
