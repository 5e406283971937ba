use clap::Parser;

fn main() {
    let cli = superstep::cli::Cli::parse();
    std::process::exit(superstep::commands::run(cli));
}
