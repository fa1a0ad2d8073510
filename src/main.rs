fn main() {
    std::process::exit(apphost::main_entry());
}
