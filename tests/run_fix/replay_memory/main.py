"""A DQN trainer in the shape of the PyTorch tutorial, with every tensor the loop makes left on
the CPU: states, rewards and the next-state values need `device=`; the rewards reach the
error only through `torch.cat` of the replay memory."""

import random
from collections import deque, namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


class ReplayMemory:
    def __init__(self, capacity):
        self.memory = deque([], maxlen=capacity)

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class DQN(nn.Module):
    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.l1 = nn.Linear(n_obs, 32)
        self.l2 = nn.Linear(32, n_actions)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class ToyEnv:
    def __init__(self):
        self.t = 0

    def reset(self):
        self.t = 0
        return [0.1, 0.2, 0.3, 0.4]

    def step(self, action):
        self.t += 1
        obs = [0.1 * self.t, 0.2, 0.3 * action, 0.4]
        return obs, 1.0 if action == 1 else 0.0, self.t >= 8


random.seed(0)
torch.manual_seed(0)
policy_net = DQN(4, 2).to(device)
target_net = DQN(4, 2).to(device)
target_net.load_state_dict(policy_net.state_dict())
optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3)
memory = ReplayMemory(100)


def select_action(state):
    with torch.no_grad():
        return policy_net(state).max(1).indices.view(1, 1)


def optimize_model(batch_size=4):
    if len(memory) < batch_size:
        return None
    batch = Transition(*zip(*memory.sample(batch_size)))
    non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)), dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(batch_size)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected = (next_state_values * 0.99) + reward_batch
    loss = F.smooth_l1_loss(state_action_values, expected.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


env = ToyEnv()
for episode in range(3):
    obs = env.reset()
    state = torch.tensor(obs, dtype=torch.float32).unsqueeze(0)
    done = False
    while not done:
        action = select_action(state)
        obs, reward, done = env.step(action.item())
        reward = torch.tensor([reward])
        next_state = None if done else torch.tensor(obs, dtype=torch.float32).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state
        last = optimize_model()
    print(episode, None if last is None else round(last, 4))
