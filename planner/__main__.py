from planner.cli._program import run

run()
