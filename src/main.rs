//! `stacks-ledger`: the command-line entry point.

use std::process::ExitCode;

use clap::Parser;
use stacks_ledger::ingest::error_chain;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, causes joined with ": " (and not repeated when a message already
            // quotes its cause).
            eprintln!("error: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}
