package main

// helperCommands are the test-only programs TestMain puts on $PATH beside
// "arca": none are needed here.
func helperCommands() map[string]func() { return nil }
