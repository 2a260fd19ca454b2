"""The front's proxy: the server (:mod:`.server`) and each client's broker connection (:mod:`.upstream`), the wire
(:mod:`.wire`, kio), the answers that name brokers rewritten (:mod:`.rewrite`), ApiVersions (:mod:`.api_versions`),
the table of the APIs answered locally (:mod:`.handlers`) and their kio adapters (:mod:`.group_apis`,
:mod:`.config_apis`, built with :mod:`.entities`), the topics shown smaller (:mod:`.topic_holds`), the front's
settings (:mod:`.config`), the group store's reads and writes in the broker (:mod:`.group_store`) and a blocking
client for probes (:mod:`.client`)."""
