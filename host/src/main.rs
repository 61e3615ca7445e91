//! The `dynaslice` command line. Every failure is one line on stderr (or a
//! JSON error document with `--output json`) and a non-zero exit, never a
//! panic message with a backtrace.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("dynaslice: internal error (please report it): {info}");
    }));
    let args = cli::args::Cli::parse();
    let json = cli::wants_json(&args);
    let limit_flag = cli::limit_flag(&args);
    let stdout_taken = cli::stdout_taken(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("dynaslice: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(code) => code,
        Err(error) => {
            cli::output::print_error(&error, json, limit_flag, stdout_taken);
            ExitCode::FAILURE
        }
    }
}
