"""A short original English text for the character language model task.

Written for this project (about 5 KB): a plain account of how a Transformer reads a sentence.
The char-lm task trains on windows from the first 90% and validates on the last 10%.
"""

CORPUS = """\
Imagine handing a sentence to a machine that has never seen a book. The first thing it does \
is cut the text into small pieces called tokens. In this little model every token is a single \
character, so the word cat becomes three tokens, one for each letter. Each token is looked up \
in a table and turned into a list of numbers, a vector that the network can bend and stretch.

Those vectors arrive all at once, side by side, with nothing to say which came first. Left \
alone, the model would treat the sentence as a bag of letters, and dog bites man would look \
just like man bites dog. To fix that, a pattern that depends only on position is added to \
every vector. Some designs use waves of many frequencies, some learn a separate vector for \
each slot, and some rotate pairs of numbers by an angle that grows along the line. Whichever \
trick is used, after this step a letter near the start differs from the same letter near the end.

Now comes attention, the heart of the design. Every position writes three things: a query \
that asks what it is looking for, a key that advertises what it holds, and a value that it is \
willing to share. A position compares its query with every key by a dot product, scales the \
scores down so they do not explode, and passes them through a softmax. The result is a set of \
weights that sum to one. The position then collects a blend of values, mixed by those weights. \
A vowel might lean on the consonant before it; a closing bracket might search for its opener.

One such comparison is called a head, and a layer runs several heads in parallel. Each head \
has its own small projections, so one can track spelling while another tracks spacing or \
punctuation. Their outputs are joined and projected back to the original width. Because \
the heads work side by side on narrow slices, the cost stays close to that of a single wide head.

After attention, each position passes through a small feed forward network on its own. It \
widens the vector, applies a bend such as a rectifier, and narrows it again. If attention is \
where tokens talk to each other, this is where each token thinks about what it has heard.

Two habits keep deep stacks trainable. A residual connection adds the input of each sublayer \
back to its output, giving gradients a straight road down through many layers. Layer \
normalization rescales every vector to a steady size; placed before each sublayer it tends to \
be gentle with fresh weights, placed after it was the choice of the original paper.

A language model adds one more rule: no peeking. When position five predicts the next \
character, it may only attend to positions one through five. A mask sets the scores for \
future keys to minus infinity, so after the softmax they receive no weight at all. Thanks to \
that mask, one pass over a window trains every position at once, each guessing its successor.

At the top, a final projection turns each vector into one score per character in the \
vocabulary, and a softmax turns the scores into probabilities. Training nudges the weights so \
that the true next character gets a little more probability each time. Early on the model \
babbles; soon it learns that a space often follows a comma, that q is followed by u, and that \
sentences tend to end with a full stop.

The loss it minimises is cross entropy, the surprise of the right answer. A trick called label \
smoothing hands a sliver of the target mass to every wrong character, which stops the model from \
growing overconfident and often helps it generalise. Dropout switches off random units during \
training for a similar reason. The learning rate usually warms up over the first few hundred \
steps and then decays, because large early updates can knock a fresh network off course.

To write text, we feed in a prompt, pick a character from the predicted distribution, append \
it, and repeat. Greedy decoding always picks the likeliest character and can loop forever on a \
favourite phrase. Beam search keeps a handful of candidates alive and prefers the sequence \
with the best total score. Sampling with a temperature trades safety for surprise.

An encoder and decoder pair works much the same way, with one addition. The decoder, while \
writing its output, also sends queries into the finished encoder states. This cross attention \
lets it point at the source word it needs right now. When the job is to reverse a list of \
numbers, the pattern of those pointers forms a clean diagonal running from corner to corner.

Looking inside is the best part. Each attention map is a grid: rows are the positions asking, \
columns are the positions answering, and bright cells show where weight was spent. Some heads \
stare at the previous character, some at the first token, and some spread their weight evenly \
as if unsure. None of this is programmed by hand; it emerges from nothing more than the \
pressure to predict well, step after step, on a laptop, in a few seconds.
"""
