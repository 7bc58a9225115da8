#!/usr/bin/env python3
"""nocast.py IN.jsonl OUT.jsonl - the same records with the measured CPU
cast term taken out of the prediction (predicted_step_s - terms.cast_s):
about what the cost model's GPU constants predict for the same plans. Not
exact: a cast that the backward pass hides did not lengthen the step."""
import json, sys
with open(sys.argv[2], 'w') as o:
    for l in open(sys.argv[1]):
        r = json.loads(l)
        r['predicted_step_s'] -= r['terms']['cast_s']
        r['terms']['cast_s'] = 0.0
        o.write(json.dumps(r) + '\n')
