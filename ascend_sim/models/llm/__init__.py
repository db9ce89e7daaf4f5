"""A tiny byte-level decoder-only language model (语言模型): its corpus, numpy reference and simulated-NPU path.

``corpus``     the training text (the standard library's ``pydoc_data.topics``), its split and the byte tokenizer
``reference``  the shapes, the shipped weights and the float32 numpy forward pass, KV-cache decode, greedy
               generation and perplexity (困惑度)
``passkey``    the long-context retrieval task (密钥检索) it is trained for besides its text, and its accuracy
``kv_compress`` RazorAttention-style KV-cache compression, judged by the passkey and by perplexity
``npu``        the same model with every layer a simulated kernel launch, KV cache (KV缓存) held in GM
(weight-only quantisation of this model: ascend_sim/migrate/llm_quant.py)
"""
