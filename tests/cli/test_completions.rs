//! `hist completions SHELL`.

use crate::common::{TestEnv, command_tree};

#[test]
fn every_shell_gets_a_script_naming_every_command() {
    let env = TestEnv::new(); // no repository needed
    let markers = [
        ("bash", "_hist()"),
        ("zsh", "#compdef hist"),
        ("fish", "complete -c hist"),
        ("elvish", "edit:completion:arg-completer[hist]"),
        ("powershell", "Register-ArgumentCompleter"),
    ];
    let commands = &command_tree(&env)[0].subcommands;
    assert!(commands.len() > 10, "{commands:?}");
    for (shell, marker) in markers {
        let out = env.run(&["completions", shell]);
        let script = out.ok();
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for sub in commands {
            assert!(script.contains(sub.as_str()), "{shell}: no {sub}");
        }
        assert!(script.contains("actor"), "{shell}");
    }
    let err = env.run(&["completions", "tcsh"]);
    assert!(
        err.fails(2)
            .starts_with("hist: error: invalid value 'tcsh'"),
        "{}",
        err.stderr
    );
}
