"""Global recourse: a few actions, the same for everyone, that help most of the rejected
people (:func:`~counterfact.recourse.global_recourse`,
:class:`~counterfact.recourse.GlobalRecourse`)."""
