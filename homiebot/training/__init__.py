"""From episode records to training data (SFT conversations, DPO preference pairs), bootstrapping
episodes with a privileged planner, and training planners on the result."""
