//! `stacks-ledger`: the command-line entry point.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;
use stacks_ledger::config::env_file;
use stacks_ledger::ingest::error_chain;

mod cli;

fn main() -> ExitCode {
    // First, in one thread: the file's variables are there for the command line's settings.
    let env_file = match env_file::load() {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("error: reading {}: {e}", env_file::FILE_NAME);
            return ExitCode::FAILURE;
        }
    };
    let args = cli::Cli::parse();
    match cli::run(args, &env_file) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line, causes joined with ": " (and not repeated when a message already
            // quotes its cause).
            eprintln!("error: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}
